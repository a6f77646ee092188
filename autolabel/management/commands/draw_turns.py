"""Draw a finished job's turns for human annotation (the "Human checks" page's action, from the shell)."""

from argparse import ArgumentTypeError

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from annotator.access import is_lead
from annotator.corpus.draws.services import DrawError
from annotator.domain.draws import MAX_DRAW_SIZE, MAX_SEED
from annotator.domain.vocabulary import DrawStrategy
from autolabel.checks.drawing import draw_for_job
from autolabel.models import AutoLabelJob


def _bounded(name, low, high):
    def parse(text):
        try:
            value = int(text)
        except ValueError:
            raise ArgumentTypeError(f"{name} must be a whole number, not {text!r}") from None
        if not low <= value <= high:
            raise ArgumentTypeError(f"{name} must be {low} to {high}, not {value}")
        return value
    return parse


class Command(BaseCommand):
    help = ("Draw N turns of a finished auto-label job for human annotation, at random (seeded, recorded) or "
            "smallest vote margin first; annotators get them first. Prints the draw and its turns.")

    def add_arguments(self, parser):
        parser.add_argument("--project", required=True, help="The project's slug.")
        parser.add_argument("--job", type=_bounded("job", 1, 2**63 - 1), required=True)
        parser.add_argument("--strategy", required=True, choices=DrawStrategy.values)
        parser.add_argument("--size", type=_bounded("size", 1, MAX_DRAW_SIZE), required=True)
        parser.add_argument("--seed", type=_bounded("seed", 0, MAX_SEED), help="At random: blank draws one.")
        parser.add_argument("--note", default="", help="Why this draw (kept with it).")
        parser.add_argument("--by", help="Username of the lead the draw is recorded for (default: nobody).")

    def handle(self, *args, **o):
        job = AutoLabelJob.objects.filter(pk=o["job"], project__slug=o["project"]).select_related("project").first()
        if job is None:
            raise CommandError(f"no job {o['job']} in project {o['project']!r}")
        actor = None
        if o["by"]:
            actor = get_user_model().objects.filter(username=o["by"]).first()
            if actor is None or not is_lead(actor, job.project):
                raise CommandError(f"{o['by']!r} is not a lead of project {o['project']!r}")
        try:
            draw = draw_for_job(job, strategy=o["strategy"], size=o["size"], seed=o["seed"], actor=actor,
                                note=o["note"])
        except DrawError as refusal:
            raise CommandError(str(refusal)) from None
        turns = list(draw.drawn_turns.values_list("turn_id", flat=True))
        seed = f", seed {draw.seed}" if draw.seed is not None else ""
        self.stdout.write(f"Draw {draw.pk} of job {job.pk} ({draw.strategy}{seed}): {len(turns)} of {draw.size} "
                          f"turns asked for")
        self.stdout.write("turns: " + " ".join(str(turn_id) for turn_id in turns))
