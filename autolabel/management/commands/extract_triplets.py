"""Start a claim-triplet extraction job (RefChecker's extractor step) from the command line."""

import time

from django.core.management.base import BaseCommand, CommandError

from annotator.models import Project
from autolabel.extraction.services import ExtractionJobError, extraction_job_create, extraction_job_run
from autolabel.models import AutoLabelJob, ExtractionJob, LLMProfile


class Command(BaseCommand):
    help = "Extract claim triplets from a project's responses with an LLM (one request per turn)."

    def add_arguments(self, parser):
        parser.add_argument("--project", required=True, help="Project slug.")
        parser.add_argument("--profile", required=True, help="LLM endpoint profile name.")
        parser.add_argument("--model", default="", help="Model name (default: the profile's).")
        parser.add_argument("--all", action="store_true",
                            help="Also turns that already have triplets (default: only turns without any).")
        parser.add_argument("--severity-of", type=int, metavar="JOB_ID",
                            help="Instead of triplets, rate the severity (1-5, HalluDetect) of the sentences this "
                                 "pre-labelling job predicted invented, misleading or speculative.")
        parser.add_argument("--wait", action="store_true", help="Wait for the worker to finish the job.")
        parser.add_argument("--inline", action="store_true", help="Run the job in this process instead of a worker.")

    def handle(self, *args, **o):
        project = Project.objects.filter(slug=o["project"]).first()
        if project is None:
            raise CommandError(f"no project with slug {o['project']!r}")
        profile = LLMProfile.objects.filter(name=o["profile"]).first()
        if profile is None:
            raise CommandError(f"no LLM profile named {o['profile']!r}")
        kind, source = ExtractionJob.Kind.TRIPLETS, None
        if o["severity_of"] is not None:
            source = AutoLabelJob.objects.filter(pk=o["severity_of"], project=project).first()
            if source is None:
                raise CommandError(f"project {project.slug} has no pre-labelling job {o['severity_of']}")
            kind = ExtractionJob.Kind.SEVERITY
        try:
            job = extraction_job_create(project=project, profile=profile, model=o["model"], kind=kind,
                                        source_job=source, only_missing=not o["all"], enqueue=not o["inline"])
        except ExtractionJobError as error:
            raise CommandError(str(error)) from None
        self.stdout.write(f"{job.get_kind_display()} job {job.pk}: {job.total_turns} turns, model {job.model}")
        if o["inline"]:
            extraction_job_run(job.pk)
        elif o["wait"]:
            while not job.is_finished:
                time.sleep(1)
                job.refresh_from_db()
        job.refresh_from_db()
        problems = ", ".join(f"{n} {kind}" for kind, n in sorted(job.problems.items())) or "no reply problems"
        self.stdout.write(
            f"Extraction job {job.pk} {job.status}: {job.done_turns}/{job.total_turns} turns, "
            f"{job.triplets_created} {'ratings' if kind == ExtractionJob.Kind.SEVERITY else 'triplets'}, {job.requests} requests, {job.retries} retries, {job.faults} faults; "
            f"{problems}"
        )
        if job.status == ExtractionJob.Status.FAILED:
            raise CommandError(job.error)
