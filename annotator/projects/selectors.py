"""Read-side queries about projects (selectors read, services write)."""

from django.db.models import Count, Q

from ..access import projects_for
from ..models import Assignment, Sentence, Turn


# One definition of a project's size, wherever it is shown: the turns to annotate, apart from the qualification
# turns (annotators label those once, before real work, and they never become gold by agreement).
WORK_TURNS = Q(dialogues__turns__is_qualification=False)
QUALIFICATION_TURNS = Q(dialogues__turns__is_qualification=True)


def project_list_for(user):
    """The user's projects with their size, for the home page."""
    return projects_for(user).annotate(
        turn_count=Count("dialogues__turns", filter=WORK_TURNS, distinct=True),
        qualification_turn_count=Count("dialogues__turns", filter=QUALIFICATION_TURNS, distinct=True),
    ).order_by("name")


def project_progress(project) -> dict:
    """Counts a lead and an annotator look at: turns, sentences, slots filled, gold."""
    turns = Turn.objects.filter(dialogue__project=project, is_qualification=False)
    turn_count = turns.count()
    qualification_turns = Turn.objects.filter(dialogue__project=project, is_qualification=True).count()
    sentences = Sentence.objects.filter(turn__dialogue__project=project, turn__is_qualification=False)
    sentence_count = sentences.count()
    submitted = Assignment.objects.filter(
        project=project, status=Assignment.Status.SUBMITTED, is_qualification=False
    ).count()
    slots = turn_count * project.overlap
    gold_count = sentences.filter(gold__isnull=False).count()
    return {
        "turns": turn_count,
        "qualification_turns": qualification_turns,
        "sentences": sentence_count,
        "slots": slots,
        "submitted_slots": submitted,
        "percent_done": round(100 * submitted / slots, 1) if slots else 0.0,
        "gold": gold_count,
        "gold_percent": round(100 * gold_count / sentence_count, 1) if sentence_count else 0.0,
    }


def annotator_counts(project, user) -> dict:
    mine = Assignment.objects.filter(project=project, annotator=user, is_qualification=False)
    return mine.aggregate(
        assigned=Count("id", filter=Q(status=Assignment.Status.ASSIGNED)),
        in_progress=Count("id", filter=Q(status=Assignment.Status.IN_PROGRESS)),
        submitted=Count("id", filter=Q(status=Assignment.Status.SUBMITTED)),
    )
