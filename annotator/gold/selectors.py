"""Read side of adjudication and gold: the queue, the dispute screen, a sentence's gold history."""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from django.db.models import Count, Exists, Min, OuterRef, Q

from ..access import ADJUDICATING_ROLES, is_lead
from ..models import (Adjudication, AnnotationEvent, Assignment, GoldEvent, GoldLabel, Membership, SentenceAnnotation,
                      Turn)
from ..domain.protocol.groups import reading
from ..projects.protocols import protocol_for
from ..domain.vocabulary import AdjudicationOrder, GoldProvenance

SIDE_KEYS = "abcdefgh"


# How each order of the adjudication queue (the project's setting) sorts its turns.
QUEUE_ORDERINGS = {
    AdjudicationOrder.OLDEST: ("oldest", "pk"),
    AdjudicationOrder.MOST_DISPUTED: ("-open_disputes", "oldest", "pk"),
    AdjudicationOrder.BATCH: ("dialogue__batch_id", "oldest", "pk"),
}


def adjudication_queue(project, user):
    """Turns with open disputes in the order the project's leads chose, excluding turns the user annotated (they
    may not judge them)."""
    annotated_by_user = Assignment.objects.filter(turn=OuterRef("pk"), annotator=user)
    open_ = Q(adjudications__status=Adjudication.Status.OPEN)
    return (
        Turn.objects.filter(dialogue__project=project, adjudications__status=Adjudication.Status.OPEN)
        .annotate(
            open_disputes=Count("adjudications", filter=open_),
            oldest=Min("adjudications__created_at", filter=open_),
            on_imported_gold=Count("adjudications", filter=open_ & Q(
                adjudications__sentence__gold__provenance=GoldProvenance.IMPORTED)),
            annotated_by_user=Exists(annotated_by_user),
        )
        .select_related("dialogue__batch")
        .order_by(*QUEUE_ORDERINGS.get(project.adjudication_order, QUEUE_ORDERINGS[AdjudicationOrder.OLDEST]))
    )


def open_disputes_for(user):
    """Open disputes the user may decide (the navigation's badge): in projects they adjudicate or lead (every
    project for a superuser), on turns they did not annotate."""
    disputes = Adjudication.objects.filter(status=Adjudication.Status.OPEN)
    if not user.is_superuser:  # a role comes from a membership; superusers lead every project
        disputes = disputes.filter(
            turn__dialogue__project__memberships__user=user,
            turn__dialogue__project__memberships__role__in=ADJUDICATING_ROLES,
        )
    return disputes.exclude(turn__assignments__annotator=user)


def adjudicating_memberships(user):
    """The user's memberships that may decide disputes (lead or adjudicator): without one, ``open_disputes_for``
    is empty for anyone but a superuser."""
    return Membership.objects.filter(user=user, role__in=ADJUDICATING_ROLES)


def oldest_dispute_project(disputes):
    """The slug of the project holding the oldest of ``disputes`` (where the badge leads)."""
    return disputes.order_by("created_at").values_list("turn__dialogue__project__slug", flat=True)


@dataclass
class StepRow:
    step: str
    question: str
    answers: list  # one per side: the wording of the answer given, or None when the step was not asked
    diverged: bool = False
    kind: str = "choice"  # a text step's answers are the sides' texts, shown side by side (issue 42)


@dataclass
class Side:
    key: str
    assignment: Assignment
    annotation: SentenceAnnotation | None
    name: str

    @property
    def label(self):
        return self.annotation.label if self.annotation else ""

    walked: bool = True  # False: the label was picked directly (independent mode); its path was never walked
    kind_steps: tuple = ()  # the protocol's multiple, scale and text steps (issue 42)

    @property
    def path(self):
        """The side's walk; for a label picked directly, only the values of the kind steps answered after the
        pick (the choice answers are the ones the label implies: nobody walked them, so none is shown)."""
        if not self.annotation or not isinstance(self.annotation.path, dict):
            return {}
        if self.walked:
            return self.annotation.path
        return {step: value for step, value in self.annotation.path.items() if step in self.kind_steps}


@dataclass
class Dispute:
    adjudication: Adjudication
    sides: list[Side]
    rows: list[StepRow]
    divergence: str | None  # the first step where the walks part
    draft: dict = field(default_factory=dict)  # a walk stored before the page walked the protocol itself
    imported_gold: str = ""  # the label imported with the data, when the annotators disagreed on imported gold
    text_lengths: dict = field(default_factory=dict)  # text step -> its max_length (the gold text's field)
    divergences: list = field(default_factory=list)  # every step the walks differ at, in protocol order (issue 50)

    @property
    def sentence(self):
        return self.adjudication.sentence

    @property
    def draft_json(self):
        return json.dumps(self.draft)

    @property
    def texts_id(self):
        return f"texts-{self.adjudication.pk}"

    @property
    def texts(self):
        """Each text step the sides answered, with its question and every side's text (None: not asked), for the
        adjudicator to pick or write the gold text (the page's data: ``texts-<dispute>``)."""
        return [{"step": row.step, "question": row.question, "max_length": self.text_lengths.get(row.step),
                 "texts": [{"side": side.key, "name": side.name, "text": side.path.get(row.step)} for side in self.sides]}
                for row in self.rows if row.kind == "text"]

    @property
    def evidence_id(self):
        return f"evidence-{self.adjudication.pk}"

    @property
    def evidence(self):
        """[start, end, side key] of every evidence span the annotators marked, for highlighting."""
        return [
            [span.start, span.end, side.key]
            for side in self.sides
            if side.annotation is not None
            for span in side.annotation.evidence.all()
        ]


def first_divergence(protocol, paths) -> str | None:
    steps = [protocol.divergence(paths[0], other) for other in paths[1:]]
    steps = [s for s in steps if s is not None]
    order = list(protocol.steps)
    return min(steps, key=order.index) if steps else None


def diverged_steps(protocol, paths) -> list[str]:
    """Every step the walked ``paths`` differ at, in protocol order: the first (where they part) and each later step
    that two of them answered differently (a multiple step's picks and a scale's point may both differ). A text
    step's words are not among the later ones: text never decides gold (domain.gold_paths)."""
    first = first_divergence(protocol, paths)
    if first is None:
        return []

    def differs(step):
        answers = {json.dumps(path[step], sort_keys=True) for path in paths if step in path}
        return len(answers) > 1 and protocol.step_kind(step) != "text"

    return [step for step in protocol.steps if step == first or differs(step)]


def dispute_for(adjudication: Adjudication, assignments, show_names: bool, protocol=None) -> Dispute:
    """Both (all) annotators' decision paths side by side, and the adjudicator's own walk so far (the steps,
    questions and answers of the project's ``protocol``)."""
    protocol = protocol or protocol_for(adjudication.turn.dialogue.project)
    read = reading(protocol)
    annotations = {a.assignment_id: a for a in adjudication.sentence.annotations.all()}
    picked = _picked_directly(adjudication.sentence_id, [a.pk for a in assignments], protocol.kind_steps())
    sides = []
    for position, assignment in enumerate(assignments):
        name = f"Annotator {SIDE_KEYS[position].upper()}"
        if show_names:
            name += f" ({assignment.annotator.get_username()})"
        sides.append(Side(SIDE_KEYS[position], assignment, annotations.get(assignment.pk), name,
                          walked=assignment.pk not in picked, kind_steps=protocol.kind_steps()))
    paths = [side.path for side in sides]
    walked_paths = [side.path for side in sides if side.walked and side.path]
    divergences = diverged_steps(protocol, walked_paths) if len(walked_paths) > 1 else []
    divergence = divergences[0] if divergences else None
    kinds = {step: protocol.step_kind(step) for step in protocol.kind_steps()}
    rows = [
        StepRow(step, read.step_questions[step],
                [read.answer_wording(step, path[step]) if step in path else None for path in paths],
                diverged=step in divergences, kind=kinds.get(step, "choice"))
        for step in protocol.steps
        if any(step in path for path in paths)
    ]
    gold = GoldLabel.objects.filter(sentence_id=adjudication.sentence_id, provenance=GoldProvenance.IMPORTED).first()
    text_lengths = {step: protocol.step(step).max_length for step, kind in kinds.items() if kind == "text"}
    return Dispute(adjudication=adjudication, sides=sides, rows=rows, divergence=divergence, text_lengths=text_lengths,
                   divergences=divergences,
                   draft=protocol.ordered(adjudication.path or {}),
                   imported_gold=gold.label if gold and adjudication.status == Adjudication.Status.OPEN else "")


def _picked_directly(sentence_id: int, assignment_ids: list[int], kind_steps=()) -> set[int]:
    """The assignments whose last step on the sentence picked a label directly (independent mode): their stored
    path is only the one the label implies, and is shown as not walked.

    In independent mode the kind steps of the picked label's walk are answered after the pick (issue 42): those
    answers, and an undo that leaves the pick standing, do not make the pick a walk."""
    last: dict[int, str] = {}
    events = AnnotationEvent.objects.filter(
        assignment_id__in=assignment_ids, sentence_id=sentence_id, action__in=("answer", "pick", "undo", "amend"),
    ).order_by("assignment_id", "-id").values_list("assignment_id", "action", "new")
    for assignment_id, action, new in events:
        if assignment_id in last:
            continue
        new = new if isinstance(new, dict) else {}
        if kind_steps and action == "answer" and new.get("step") in kind_steps:
            continue
        if kind_steps and action == "undo" and new.get("path"):
            continue
        last[assignment_id] = action
    return {assignment_id for assignment_id, action in last.items() if action == "pick"}


def turn_assignments(turn):
    return list(
        Assignment.objects.filter(turn=turn, is_qualification=False, status=Assignment.Status.SUBMITTED)
        .select_related("annotator")
        .order_by("pk")
    )


def adjudication_screen(project, turn, user) -> dict:
    """Everything the adjudication screen shows for one turn."""
    assignments = turn_assignments(turn)
    adjudications = (
        Adjudication.objects.filter(turn=turn)
        .select_related("sentence", "adjudicator", "chosen_assignment__annotator")
        .prefetch_related("sentence__annotations__evidence", "evidence")
        .order_by("sentence__index", "created_at")
    )
    show_names = is_lead(user, project)
    # The latest adjudication of each sentence (an older one may have been withdrawn by a reopening).
    latest = {}
    for adjudication in adjudications:
        latest[adjudication.sentence_id] = adjudication
    protocol = protocol_for(project)
    disputes = [dispute_for(a, assignments, show_names, protocol) for a in latest.values()]
    disputed = {d.sentence.pk: d for d in disputes}
    gold = dict(GoldLabel.objects.filter(sentence__turn=turn).values_list("sentence_id", "label"))
    sentences = [
        {"sentence": s, "dispute": disputed.get(s.pk), "gold": gold.get(s.pk)}
        for s in turn.sentences.order_by("index")
    ]
    return {
        "turn": turn,
        "dialogue": turn.dialogue,
        "sentences": sentences,
        "disputes": disputes,
        "open_count": sum(1 for d in disputes if d.adjudication.status == Adjudication.Status.OPEN),
        "show_names": show_names,
        "protocol": protocol,
    }


def gold_history(sentence):
    """A sentence's gold now and every change that led to it, oldest first."""
    protocol = protocol_for(sentence.turn.dialogue.project)
    read = reading(protocol)
    gold = GoldLabel.objects.filter(sentence=sentence).select_related("decided_by").first()
    path = gold.path if gold and isinstance(gold.path, dict) else {}
    return {
        "gold": gold,
        # The gold's multiple, scale and text values (issue 42), as the page words them: the label says the rest.
        "gold_values": [(read.step_questions[step], read.answer_wording(step, path[step]))
                        for step in protocol.kind_steps() if step in path],
        "events": list(GoldEvent.objects.filter(sentence=sentence).select_related("actor")),
        "adjudications": list(
            Adjudication.objects.filter(sentence=sentence).select_related("adjudicator").order_by("created_at")
        ),
        "labels": [{"value": label, "label": read.label_name(label)} for label in read.labels],
        "protocol": protocol,
    }
