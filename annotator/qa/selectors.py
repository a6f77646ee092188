"""Read-side queries of the QA loop: inboxes, badges, review sets, QA effort per 500 statements."""

from __future__ import annotations

import datetime
import random
from collections import defaultdict

from django.contrib.auth import get_user_model
from django.db.models import Count, Exists, F, OuterRef, Q, Subquery
from django.utils import timezone

from .. import access
from ..models import Assignment, Feedback, Membership, QualificationResult, Question, QuestionMessage, SentenceAnnotation, Turn
from ..domain.vocabulary import Role

PER = 500  # CogniBench reports QA instances per 500 statements (Table 1).


# --- Who leads what --------------------------------------------------------

def led_projects(user):
    return access.led_projects(user)


def _blind_turns(user):
    """Turns on which ``user`` holds an unsubmitted slot (any project): others' threads there are hidden."""
    return Assignment.objects.filter(annotator=user, status__in=access.UNSUBMITTED).values("turn_id")


# --- Questions -------------------------------------------------------------

def _message_count():
    return Subquery(
        QuestionMessage.objects.filter(question=OuterRef("pk")).order_by().values("question")
        .annotate(n=Count("id")).values("n")[:1]
    )


def _first_message():
    return Subquery(
        QuestionMessage.objects.filter(question=OuterRef("pk")).order_by("created_at", "id").values("body")[:1]
    )


def questions_for_lead(user, status=Question.Status.OPEN, project=None):
    """Questions in the projects ``user`` leads, oldest open first (the inbox)."""
    qs = Question.objects.filter(project__in=led_projects(user)).exclude(
        ~Q(asked_by=user), turn_id__in=_blind_turns(user)
    ).select_related(
        "project", "asked_by", "sentence", "turn__dialogue"
    ).annotate(message_count=_message_count(), first_message=_first_message())
    if status:
        qs = qs.filter(status=status)
    if project is not None:
        qs = qs.filter(project=project)
    return qs.order_by("created_at", "id") if status == Question.Status.OPEN else qs.order_by("-updated_at", "-id")


def waiting_for_retry_slugs(user):
    """One project slug per annotator who failed their last qualification attempt in a project ``user`` leads and
    waits for a lead to allow a retry (no automatic retry left), oldest first (a queryset)."""
    later = QualificationResult.objects.filter(project_id=OuterRef("project_id"), annotator_id=OuterRef("annotator_id"),
                                               attempt__gt=OuterRef("attempt"))
    still_member = Membership.objects.filter(project_id=OuterRef("project_id"), user_id=OuterRef("annotator_id"))
    return (QualificationResult.objects.filter(project__in=access.led_projects(user), passed=False, retry_allowed=False)
            .filter(~Exists(later), Exists(still_member)).order_by("created_at")
            .values_list("project__slug", flat=True))


def open_questions_for_lead(user):
    """The open questions of the projects ``user`` leads, but others' on turns where ``user`` holds a slot."""
    return Question.objects.filter(project__in=led_projects(user), status=Question.Status.OPEN).exclude(
        ~Q(asked_by=user), turn_id__in=_blind_turns(user)
    )


def questions_of(user, project=None, turn=None):
    """The questions ``user`` asked in the projects they still belong to, newest activity first."""
    qs = Question.objects.filter(asked_by=user, project__in=access.projects_for(user)).select_related(
        "project", "sentence", "turn__dialogue"
    ).annotate(first_message=_first_message())
    if project is not None:
        qs = qs.filter(project=project)
    if turn is not None:
        qs = qs.filter(turn=turn)
    return qs.order_by("-updated_at", "-id")


def questions_on_turn(user, turn):
    """The user's questions on one turn with their threads (the annotation screen's panel)."""
    return questions_of(user, turn=turn).prefetch_related("messages__author")


def saved_path(user, sentence):
    """The user's saved decision path on ``sentence`` (None when they have no answer on it)."""
    return (
        SentenceAnnotation.objects.filter(sentence=sentence, assignment__annotator=user)
        .exclude(assignment__status=Assignment.Status.RELEASED)
        .values_list("path", flat=True)
        .first()
    )


def unread_answers(user, project=None):
    """The user's questions with an answer they have not read (the "My questions" badge)."""
    qs = Question.objects.filter(asked_by=user, unread_by_asker=True, project__in=access.projects_for(user))
    if project is not None:
        qs = qs.filter(project=project)
    return qs


def unread_answer_count(user, project=None) -> int:
    return unread_answers(user, project).count()


def question_thread(question):
    return question.messages.select_related("author")


# --- Feedback --------------------------------------------------------------

def feedback_for_annotator(user, project=None, pending_only=False):
    qs = Feedback.objects.filter(
        annotation__assignment__annotator=user, project__in=access.projects_for(user)
    ).select_related(
        "project", "lead", "annotation__sentence__turn__dialogue", "annotation__assignment"
    )
    if project is not None:
        qs = qs.filter(project=project)
    if pending_only:
        qs = qs.filter(acknowledged_at__isnull=True)
    return qs.order_by("acknowledged_at", "-created_at") if not pending_only else qs.order_by("-created_at")


def unacknowledged_feedback(user, project=None):
    """Feedback on the user's answers they have not acknowledged (the "Feedback" badge)."""
    qs = Feedback.objects.filter(annotation__assignment__annotator=user, acknowledged_at__isnull=True,
                                 project__in=access.projects_for(user))
    if project is not None:
        qs = qs.filter(project=project)
    return qs


def unacknowledged_feedback_count(user, project=None) -> int:
    return unacknowledged_feedback(user, project).count()


def leads_anywhere(user):
    """The user's lead memberships (whether the lead's badges show)."""
    return Membership.objects.filter(user=user, role=Role.LEAD)


def nav_counts(user) -> dict:
    """The navigation badges. One query each, whatever the data size."""
    if not user.is_authenticated:
        return {}
    is_lead_anywhere = user.is_superuser or leads_anywhere(user).exists()
    return nav_counts_from(user, is_lead_anywhere, unread_answer_count(user), unacknowledged_feedback_count(user))


def nav_counts_from(user, is_lead_anywhere: bool, unread: int, pending_feedback: int, lead_counts=None) -> dict:
    """``nav_counts`` from the counts every user has (read elsewhere, e.g. in one statement), the lead's added:
    ``lead_counts`` (waiting for a retry, the first of their projects' slugs, open questions) when read
    elsewhere too, else read here."""
    if not is_lead_anywhere:
        lead_counts = (0, None, 0)
    elif lead_counts is None:
        waiting = list(waiting_for_retry_slugs(user))
        lead_counts = (len(waiting), waiting[0] if waiting else None, open_questions_for_lead(user).count())
    waiting_count, first_waiting, open_questions = lead_counts
    return {
        "is_lead": is_lead_anywhere,
        "open_questions": open_questions,
        "waiting_for_retry": waiting_count,
        "waiting_for_retry_project": first_waiting or "",
        "unread_answers": unread,
        "pending_feedback": pending_feedback,
    }


# --- Review sets for post-hoc feedback ------------------------------------

def _reviewable(project):
    """Submitted real (non-qualification) sentence annotations of the project."""
    return SentenceAnnotation.objects.filter(
        assignment__project=project,
        assignment__status=Assignment.Status.SUBMITTED,
        assignment__is_qualification=False,
    ).exclude(label="")


def _with_context(qs):
    return qs.select_related("assignment__annotator", "sentence__turn__dialogue", "sentence__gold").prefetch_related(
        "feedback"
    )


def review_sample(project, annotator, size=20, seed=0):
    """A random sample of ``annotator``'s submitted work; the same seed gives the same sample."""
    ids = sorted(_reviewable(project).filter(assignment__annotator=annotator).values_list("pk", flat=True))
    chosen = random.Random(seed).sample(ids, min(size, len(ids)))
    return _with_context(SentenceAnnotation.objects.filter(pk__in=chosen)).order_by("sentence__turn_id", "sentence__index")


def disputed_sentence_ids(project, annotator=None) -> list[int]:
    """Sentences on which the submitted labels differ (those ``annotator`` judged, if given), in turn order.

    One GROUP BY over the project's judged statements; the review page then
    fetches only one page of sentences.
    """
    qs = _reviewable(project).values("sentence_id").annotate(labels=Count("label", distinct=True))
    if annotator is not None:
        qs = qs.annotate(mine=Count("id", filter=Q(assignment__annotator=annotator))).filter(mine__gt=0)
    return sorted(row["sentence_id"] for row in qs.filter(labels__gt=1))


def review_disagreements(project, sentence_ids, annotator=None):
    """The annotations of ``sentence_ids`` (a page of disputed sentences), every annotator's or one's."""
    qs = _reviewable(project).filter(sentence_id__in=list(sentence_ids))
    if annotator is not None:
        qs = qs.filter(assignment__annotator=annotator)
    return _with_context(qs).order_by("sentence__turn_id", "sentence__index", "assignment__annotator__username")


def review_gold_disagreements(project, annotator=None):
    """Annotations whose label differs from the sentence's gold label."""
    qs = _reviewable(project).filter(sentence__gold__isnull=False).exclude(label=F("sentence__gold__label"))
    if annotator is not None:
        qs = qs.filter(assignment__annotator=annotator)
    return _with_context(qs).order_by("sentence__turn_id", "sentence__index", "assignment__annotator__username")


def other_labels(annotations):
    """For each sentence in ``annotations``: every annotator's label, to show beside a disputed one."""
    sentence_ids = {a.sentence_id for a in annotations}
    rows = SentenceAnnotation.objects.filter(
        sentence_id__in=sentence_ids, assignment__status=Assignment.Status.SUBMITTED,
        assignment__is_qualification=False,
    ).values("sentence_id", "assignment__annotator__username", "label")
    result = defaultdict(list)
    for row in rows:
        result[row["sentence_id"]].append((row["assignment__annotator__username"], row["label"]))
    return result


def project_annotators(project):
    User = get_user_model()
    return User.objects.filter(
        Q(memberships__project=project, memberships__role=Role.ANNOTATOR)
        | Q(assignments__project=project)
    ).distinct().order_by("username")


# --- QA effort per 500 statements (CogniBench Table 1) ----------------------

def _per(count, statements):
    return round(PER * count / statements, 2) if statements else None


def _row(statements, questions, feedback):
    return {
        "statements": statements,
        "questions": questions,
        "feedback": feedback,
        "instances": questions + feedback,
        "questions_per_500": _per(questions, statements),
        "feedback_per_500": _per(feedback, statements),
        "instances_per_500": _per(questions + feedback, statements),
    }


def _statements(project):
    """Statements judged in real work: labelled sentence annotations of submitted, non-qualification slots."""
    return _reviewable(project)


def _questions(project):
    return Question.objects.filter(project=project, turn__is_qualification=False)


def _feedback(project):
    return Feedback.objects.filter(project=project, annotation__assignment__is_qualification=False)


def qa_measures(project) -> dict:
    """QA instances (questions + feedback) per 500 judged statements, for the whole project."""
    return {
        "protocol_mode": project.protocol_mode,
        **_row(_statements(project).count(), _questions(project).count(), _feedback(project).count()),
    }


def _statements_per_assignment(project):
    """[(annotator id, submitted_at, statements)] per submitted real assignment: one GROUP BY on assignment."""
    counts = dict(
        _statements(project).values("assignment_id").annotate(n=Count("id")).values_list("assignment_id", "n")
    )
    assignments = Assignment.objects.filter(project=project, status=Assignment.Status.SUBMITTED, is_qualification=False)
    return [
        (annotator_id, submitted_at, counts[pk])
        for pk, annotator_id, submitted_at in assignments.values_list("id", "annotator_id", "submitted_at")
        if pk in counts
    ]


def qa_measures_by_annotator(project, per_assignment=None) -> list[dict]:
    statements = defaultdict(int)
    for annotator_id, _, n in per_assignment if per_assignment is not None else _statements_per_assignment(project):
        statements[annotator_id] += n
    questions = dict(_questions(project).values_list("asked_by").annotate(n=Count("id")).values_list("asked_by", "n"))
    feedback = dict(
        _feedback(project).values_list("annotation__assignment__annotator").annotate(n=Count("id")).values_list(
            "annotation__assignment__annotator", "n"
        )
    )
    user_ids = set(statements) | set(questions) | set(feedback)
    names = dict(get_user_model().objects.filter(pk__in=user_ids).values_list("pk", "username"))
    rows = [
        {"annotator_id": uid, "annotator": names.get(uid, "?"),
         **_row(statements.get(uid, 0), questions.get(uid, 0), feedback.get(uid, 0))}
        for uid in user_ids
    ]
    return sorted(rows, key=lambda r: r["annotator"])


def _week_of(moment) -> datetime.date:
    """The Monday of ``moment``'s week, in the current time zone (as TruncWeek gives it)."""
    day = timezone.localtime(moment).date() if timezone.is_aware(moment) else moment.date()
    return day - datetime.timedelta(days=day.weekday())


def qa_measures_by_week(project, per_assignment=None) -> list[dict]:
    """Per calendar week (Monday): statements submitted, questions asked and feedback given that week."""
    statements = defaultdict(int)
    for _, submitted_at, n in per_assignment if per_assignment is not None else _statements_per_assignment(project):
        if submitted_at is not None:
            statements[_week_of(submitted_at)] += n
    questions = defaultdict(int)
    for created_at in _questions(project).values_list("created_at", flat=True):
        questions[_week_of(created_at)] += 1
    feedback = defaultdict(int)
    for created_at in _feedback(project).values_list("created_at", flat=True):
        feedback[_week_of(created_at)] += 1
    weeks = sorted({*statements, *questions, *feedback})
    return [{"week": week, **_row(statements[week], questions[week], feedback[week])} for week in weeks]


def qa_report(project) -> dict:
    """The whole QA-effort page: project total, per annotator, per week, from one pass over the statements."""
    per_assignment = _statements_per_assignment(project)
    total = {
        "protocol_mode": project.protocol_mode,
        **_row(sum(n for *_, n in per_assignment), _questions(project).count(), _feedback(project).count()),
    }
    return {
        "total": total,
        "by_annotator": qa_measures_by_annotator(project, per_assignment),
        "by_week": qa_measures_by_week(project, per_assignment),
    }


# --- Qualification ------------------------------------------------------------

def qualification_results(project):
    """Every attempt, grouped per annotator (latest attempt first)."""
    results = QualificationResult.objects.filter(project=project).select_related("annotator", "retry_allowed_by")
    grouped = defaultdict(list)
    for result in results.order_by("annotator__username", "-attempt"):
        grouped[result.annotator].append(result)
    return list(grouped.items())


def turns_with_qualification_counts(project):
    """The project's turns with what decides whether one can be a qualification turn:
    its sentences, how many have gold, and how many real-work slots hold it."""
    return (
        Turn.objects.filter(dialogue__project=project)
        .select_related("dialogue")
        .annotate(
            sentence_count=Count("sentences", distinct=True),
            gold_count=Count("sentences__gold", distinct=True),
            real_slots=Count(
                "assignments",
                filter=Q(assignments__is_qualification=False) & ~Q(assignments__status=Assignment.Status.RELEASED),
                distinct=True,
            ),
        )
    )
