"""Start an auto-label job from the command line (optionally wait for it and print its progress)."""

import time

from django.core.management.base import BaseCommand, CommandError
from django.db.models import F, Q

from annotator.models import Project
from autolabel.jobs import estimation, selectors, services
from autolabel.models import AutoLabelJob, LLMProfile, PromptVersion


class Command(BaseCommand):
    help = "Pre-label a project's turns with an LLM: k samples per turn, majority vote with a threshold."

    def add_arguments(self, parser):
        parser.add_argument("--project", required=True, help="Project slug.")
        parser.add_argument("--turns", nargs="*", type=int, help="Turn ids (default: every non-qualification turn).")
        parser.add_argument("--profile", help="LLM endpoint profile name (default: the only one, or OPENAI_BASE_URL).")
        parser.add_argument("--model", default="", help="Model name (default: the profile's).")
        parser.add_argument("--samples", type=int, default=5)
        parser.add_argument("--threshold", type=int, default=3)
        parser.add_argument("--prompt-version", type=int, help="Prompt version number (default: the latest).")
        parser.add_argument("--no-n", action="store_true", help="One request per sample even if the endpoint supports n.")
        parser.add_argument("--batch", action="store_true", help="Send the requests through the Batch API.")
        parser.add_argument("--wait", action="store_true", help="Wait for the job to finish, printing its progress.")
        parser.add_argument("--inline", action="store_true",
                            help="Run the job in this process instead of a Celery worker (implies --wait).")
        parser.add_argument("--estimate", action="store_true",
                            help="Print what the job would send and cost (requests, tokens, cost, time) and stop: "
                                 "nothing is sent, no endpoint needs to be running, no job is created.")

    def handle(self, *args, **o):
        try:
            project = Project.objects.get(slug=o["project"])
        except Project.DoesNotExist:
            raise CommandError(f"no project with slug {o['project']!r}") from None
        profile = self._profile(o["profile"], project, create=not o["estimate"])
        prompt_version = None
        if o["prompt_version"] is not None:
            prompt_version = PromptVersion.objects.filter(project=project, version=o["prompt_version"]).first()
            if prompt_version is None:
                raise CommandError(f"project {project.slug} has no prompt version {o['prompt_version']}")
        if o["estimate"]:
            self._print_estimate(project, profile, prompt_version, o)
            return
        try:
            job = services.job_create(
                project=project, profile=profile, model=o["model"], samples=o["samples"], threshold=o["threshold"],
                prompt_version=prompt_version, turn_ids=o["turns"], use_n=not o["no_n"], batch_mode=o["batch"],
                enqueue=not o["inline"],
            )
        except services.JobError as error:
            raise CommandError(str(error)) from None
        self.stdout.write(f"Job {job.pk}: {job.total_turns} turns, model {job.model}, {job.samples} samples, "
                          f"threshold {job.threshold}, prompt v{job.prompt_version.version}")
        if o["inline"]:
            services.job_run(job.pk)
        elif o["wait"]:
            last = None
            while True:
                job.refresh_from_db()
                line = f"{job.status}: {job.done_turns}/{job.total_turns} turns"
                if line != last:
                    self.stdout.write(line)
                    last = line
                if job.is_finished:
                    break
                time.sleep(1)
        job.refresh_from_db()
        state = job.state
        self.stdout.write(
            f"Job {job.pk} {state.title.lower()}: {job.done_turns}/{job.total_turns} turns, {job.requests} requests, "
            f"{job.retries} retries, {job.faults} faults, {job.abstentions} abstentions, "
            f"{job.prompt_tokens}+{job.completion_tokens} tokens, cost {job.cost}"
        )
        if state.key == "done_with_problems":
            self.stdout.write(f"Problems: {state.reason}")
        if job.status == AutoLabelJob.Status.FAILED:
            raise CommandError(f"Job {job.pk} failed: {job.error}")

    def _print_estimate(self, project, profile, prompt_version, o):
        turns, strangers = selectors.job_scope(project, o["turns"])
        if strangers:
            raise CommandError(f"turns not in project {project.slug}: {', '.join(map(str, strangers[:10]))}")
        e = estimation.estimate_for(project, profile, turns=turns, samples=o["samples"], use_n=not o["no_n"],
                                    batch_mode=o["batch"], prompt_version=prompt_version)
        seconds = f"{e.seconds} s at {profile.latency_seconds} s a request, {profile.concurrency} at once" \
            if e.seconds is not None else "unknown (test the endpoint to measure its latency)"
        self.stdout.write(
            f"Estimate for {project.slug} through {profile.name} ({profile.endpoint_url()}), nothing sent:\n"
            f"  turns {e.turns}, sentences {e.sentences}, requests {e.requests}\n"
            f"  prompt tokens {e.prompt_tokens}, reply tokens {e.completion_tokens}"
            f"{' (stage 2 counted for every sentence: at most)' if e.stage2_upper_bound else ''}\n"
            f"  cost {e.cost} at {profile.input_price_per_million} / {profile.output_price_per_million} "
            f"per million prompt / reply tokens{' (batch: half price)' if o['batch'] else ''}\n"
            f"  time {seconds}"
        )

    def _profile(self, name, project, create=True):
        if name:
            # The project's own endpoint of that name first, then the site's.
            profile = (LLMProfile.objects.filter(name=name).filter(Q(project=project) | Q(project__isnull=True))
                       .order_by(F("project").desc(nulls_last=True)).first())
            if profile is None:
                raise CommandError(f"no LLM profile named {name!r}")
            return profile
        profiles = list(LLMProfile.objects.filter(project__isnull=True)[:2])
        if len(profiles) == 1:
            return profiles[0]
        if profiles:
            raise CommandError("several LLM profiles exist: choose one with --profile")
        from django.conf import settings

        # The site's default endpoint: OPENAI_BASE_URL as it is when the job runs, not as it is now.
        if not create:
            return LLMProfile(name="default", base_url=settings.OPENAI_BASE_URL, follows_environment=True)
        profile, _ = LLMProfile.objects.get_or_create(
            name="default", project=None,
            defaults={"base_url": settings.OPENAI_BASE_URL, "api_key_env": "OPENAI_API_KEY",
                      "follows_environment": True},
        )
        return profile
