"""Start an auto-label job from the command line (optionally wait for it and print its progress)."""

import time

from django.core.management.base import BaseCommand, CommandError

from annotator.models import Project
from autolabel.jobs import services
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

    def handle(self, *args, **o):
        try:
            project = Project.objects.get(slug=o["project"])
        except Project.DoesNotExist:
            raise CommandError(f"no project with slug {o['project']!r}") from None
        profile = self._profile(o["profile"])
        prompt_version = None
        if o["prompt_version"] is not None:
            prompt_version = PromptVersion.objects.filter(project=project, version=o["prompt_version"]).first()
            if prompt_version is None:
                raise CommandError(f"project {project.slug} has no prompt version {o['prompt_version']}")
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
        self.stdout.write(
            f"Job {job.pk} {job.status}: {job.done_turns}/{job.total_turns} turns, {job.requests} requests, "
            f"{job.retries} retries, {job.faults} faults, {job.abstentions} abstentions, "
            f"{job.prompt_tokens}+{job.completion_tokens} tokens, cost {job.cost}"
        )
        if job.status == AutoLabelJob.Status.FAILED:
            raise CommandError(job.error)

    def _profile(self, name):
        if name:
            profile = LLMProfile.objects.filter(name=name).first()
            if profile is None:
                raise CommandError(f"no LLM profile named {name!r}")
            return profile
        profiles = list(LLMProfile.objects.all()[:2])
        if len(profiles) == 1:
            return profiles[0]
        if profiles:
            raise CommandError("several LLM profiles exist: choose one with --profile")
        from django.conf import settings

        profile, _ = LLMProfile.objects.get_or_create(
            name="default", defaults={"base_url": settings.OPENAI_BASE_URL, "api_key_env": "OPENAI_API_KEY"}
        )
        return profile
