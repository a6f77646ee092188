"""Read side of the annotation workspace.

``screen_state`` gathers everything the annotation screen and its decision
panel show, in a fixed number of queries (sentences, the annotator's own
annotations, their evidence, the project's guideline examples) whatever the
length of the turn or the size of the reference. It reads only the requesting
annotator's assignment: other annotators' answers, gold and pre-labels are
never loaded, so they cannot leak into a page or a partial.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from datetime import timedelta
from functools import cache

from django.db import connection
from django.db.models import Count, Q
from django.urls import reverse
from django.utils import timezone

from ..domain.assignment import UNFINISHED, is_stale
from ..domain.evidence import from_browser_offset
from ..models import Assignment, EvidenceSpan, GuidelineExample, Sentence, SentenceAnnotation
from .assignment import candidate_pools
from .services import evidence_required
from ..domain.protocol.groups import reading
from ..projects.protocols import protocol_for_assignment
from ..domain.vocabulary import ProtocolMode
from ..fastsql.joined import JoinedSelect
DEFAULT_STALE_AFTER = timedelta(hours=24)


@dataclass
class SentenceRow:
    sentence: Sentence
    number: int
    annotation: SentenceAnnotation | None
    evidence: list = field(default_factory=list)
    protocol: object = None  # the project's protocol

    @property
    def label(self) -> str:
        return self.annotation.label if self.annotation else ""

    @property
    def label_display(self) -> str:
        return reading(self.protocol).label_name(self.label) if self.label else ""

    @property
    def path(self) -> dict:
        return self.protocol.ordered(self.annotation.path) if self.annotation else {}

    @property
    def started(self) -> bool:
        return bool(self.path)


def reference_segments(reference: str, spans) -> list[tuple[str, int | None]]:
    """Cut the reference into (text, evidence span id or None) pieces for highlighting.

    Overlapping spans merge into one highlight (carrying the first span's id).
    The pieces joined give back the reference exactly, so the character offsets
    the browser computes on the rendered text are offsets into the reference.
    """
    marks = sorted((s.start, s.end, s.pk) for s in spans if 0 <= s.start < s.end <= len(reference))
    merged: list[list] = []
    for start, end, pk in marks:
        if merged and start <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], end)
        else:
            merged.append([start, end, pk])
    pieces, cursor = [], 0
    for start, end, pk in merged:
        if start > cursor:
            pieces.append((reference[cursor:start], None))
        pieces.append((reference[start:end], pk))
        cursor = end
    if cursor < len(reference) or not pieces:
        pieces.append((reference[cursor:], None))
    return pieces


def browser_offset_to_reference(reference: str, offset: int) -> int:
    """Map an offset counted on the text a browser shows (UTF-16 units, CR LF read as LF) to an offset in the reference."""
    return from_browser_offset(reference, offset)


def history_messages(history) -> list[dict]:
    """The earlier turns as (role, text) pairs, whatever shape the importer stored them in."""
    messages = []
    for item in history if isinstance(history, list) else []:
        if isinstance(item, dict):
            role = str(item.get("role") or "user")
            text = item.get("text", item.get("content", ""))
            messages.append({"role": role if role in ("user", "assistant", "system") else "user", "text": str(text)})
        else:
            messages.append({"role": "user", "text": str(item)})
    return messages


def screen_state(assignment: Assignment, sentence_id: int | None = None, advance_from: int | None = None) -> dict:
    """Everything the annotation screen shows, for the active sentence ``sentence_id``.

    With ``advance_from`` (a sentence just completed), the active sentence is the
    next one without a label after it, so the annotator moves on by itself.
    """
    project = assignment.project
    sentences, annotations, with_evidence = _sentences_with_my_annotations(assignment)
    evidence = defaultdict(list)
    if with_evidence:
        for span in EvidenceSpan.objects.filter(annotation__assignment_id=assignment.pk).order_by("start", "id"):
            evidence[span.annotation_id].append(span)
    rows = []
    protocol = protocol_for_assignment(assignment)
    for number, sentence in enumerate(sentences, start=1):
        annotation = annotations.get(sentence.pk)
        rows.append(SentenceRow(sentence, number, annotation, evidence.get(annotation.pk, []) if annotation else [],
                                protocol))

    active = _choose_active(rows, sentence_id, advance_from)
    done = sum(1 for row in rows if row.label)
    examples = []
    if active is not None and project.protocol_mode != ProtocolMode.INDEPENDENT and not active.label:
        examples = project_examples(project)
    closed = assignment.status not in UNFINISHED
    state = {
        "assignment": assignment,
        "act_urls": panel_action_urls(assignment.pk),
        "project": project,
        "turn": assignment.turn,
        "dialogue": assignment.turn.dialogue,
        "rows": rows,
        "active": active,
        "done_count": done,
        "total": len(rows),
        "all_done": done == len(rows) and rows,
        "closed": closed,
        "independent": project.protocol_mode == ProtocolMode.INDEPENDENT,
        "previous_row": _neighbour(rows, active, -1),
        "next_row": _neighbour(rows, active, +1),
        "history": history_messages(assignment.turn.history),
        "protocol": protocol,
        "reference_pieces": reference_segments(assignment.turn.dialogue.reference, active.evidence if active else []),
    }
    if active is not None:
        state.update(_panel(project, protocol, active, examples))
    return state


PANEL_ACTIONS = ("answer", "pick", "undo", "note", "evidence_add", "evidence_remove")


def panel_action_urls(assignment_id: int) -> dict:
    """Where the decision panel's forms post: one reverse() per panel instead of one per form.

    The screen's URL plus the action, as annotator/urls.py nests them (tested).
    """
    base = reverse("annotate", args=[assignment_id])
    return {action: f"{base}{action}/" for action in PANEL_ACTIONS}


# Read on every decision: written once (selectors/joined.py says why).
_PROJECT_EXAMPLES = JoinedSelect(GuidelineExample, "g", joins=[], extra_columns=[],
                                 where='g.project_id = %s ORDER BY g.step, g.position, g.id')
_EXAMPLES = "_guideline_examples"


def project_examples(project) -> list[GuidelineExample]:
    """The project's guideline examples, read once per request: the screen's panel and its page data both show them."""
    if _EXAMPLES not in project.__dict__:
        project.__dict__[_EXAMPLES] = [example for example, _ in _PROJECT_EXAMPLES.fetch_all([project.pk])]
    return project.__dict__[_EXAMPLES]


_TURN_SENTENCE = JoinedSelect(Sentence, "s", joins=[], extra_columns=[], where="s.id = %s AND s.turn_id = %s")


def turn_sentence(assignment: Assignment, sentence_id) -> Sentence | None:
    """The sentence ``sentence_id`` if it belongs to the assignment's turn."""
    try:
        found = _TURN_SENTENCE.fetch_one([int(sentence_id), assignment.turn_id])
    except (TypeError, ValueError, OverflowError):
        return None
    return found[0] if found else None


SENTENCE_FIELDS = ("id", "turn_id", "index", "text", "start", "end")
MINE_FIELDS = ("id", "path", "label", "note", "seconds_spent", "severity", "justification", "error_type")


def _sentences_with_my_annotations(assignment):
    """The turn's sentences and this assignment's annotations of them, in one query (a LEFT JOIN).

    Also says whether any of those annotations has evidence spans, so that the spans are only
    queried when there are some.
    """
    with connection.cursor() as cursor:
        cursor.execute(_rows_sql(), [assignment.pk, assignment.turn_id])
        rows = cursor.fetchall()
    path_field = SentenceAnnotation._meta.get_field("path")
    width = len(SENTENCE_FIELDS)
    sentences, annotations, with_evidence = [], {}, False
    for row in rows:
        with_evidence = with_evidence or bool(row[-1])
        # from_db with every concrete field in order builds the instance positionally (the fast path).
        sentence = Sentence.from_db(None, SENTENCE_FIELDS, row[:width])
        sentences.append(sentence)
        mine = dict(zip(MINE_FIELDS, row[width:-1]))
        if mine["id"] is not None:
            mine["path"] = path_field.from_db_value(mine["path"], None, connection)
            annotations[sentence.pk] = SentenceAnnotation(assignment_id=assignment.pk, sentence_id=sentence.pk, **mine)
    return sentences, annotations, with_evidence


@cache
def _rows_sql() -> str:
    """The query of ``_sentences_with_my_annotations``, written once.

    In SQL rather than built by the ORM on each call: it runs on every decision
    and every screen, and compiling it (a filtered relation and an EXISTS)
    took more of the web server's CPU than anything else in a decision request
    (bench/load.py under py-spy; docs/benchmarks.md).
    """
    quote = connection.ops.quote_name

    def columns(model, alias, names):
        return [f"{alias}.{quote(model._meta.get_field(name).column)}" for name in names]

    annotation = SentenceAnnotation._meta
    return (
        f"SELECT {', '.join(columns(Sentence, 's', SENTENCE_FIELDS) + columns(SentenceAnnotation, 'm', MINE_FIELDS))}, "
        f"EXISTS (SELECT 1 FROM {quote(EvidenceSpan._meta.db_table)} e "
        f"WHERE e.{quote(EvidenceSpan._meta.get_field('annotation').column)} = m.{quote('id')}) "
        f"FROM {quote(Sentence._meta.db_table)} s "
        f"LEFT JOIN {quote(annotation.db_table)} m ON m.{quote(annotation.get_field('sentence').column)} = s.{quote('id')} "
        f"AND m.{quote(annotation.get_field('assignment').column)} = %s "
        f"WHERE s.{quote(Sentence._meta.get_field('turn').column)} = %s ORDER BY s.{quote('index')}"
    )


def _choose_active(rows, sentence_id, advance_from):
    if not rows:
        return None
    by_id = {row.sentence.pk: row for row in rows}
    if advance_from is not None and advance_from in by_id:
        position = rows.index(by_id[advance_from])
        for row in rows[position + 1:] + rows[:position]:
            if not row.label:
                return row
        return by_id[advance_from]
    if sentence_id is not None and sentence_id in by_id:
        return by_id[sentence_id]
    return next((row for row in rows if not row.label), rows[0])


def _neighbour(rows, active, delta):
    if active is None:
        return None
    position = rows.index(active) + delta
    return rows[position] if 0 <= position < len(rows) else None


def _panel(project, protocol, row: SentenceRow, examples) -> dict:
    """The decision panel of one sentence: the walk so far, the question now, its examples (the slot's protocol)."""
    read = reading(protocol)
    path = row.path
    answered = []
    for step in protocol.steps_of(path):
        answered.append({
            "step": str(step),
            "question": read.step_questions[step],
            "options": [{"value": a["value"], "label": a["label"], "chosen": path[step] == a["value"] or (
                isinstance(path[step], list) and a["value"] in path[step])} for a in read.step_options[step]],
        })
    try:
        current = protocol.next_step(path)
    except (KeyError, ValueError):
        current = read.start
    panel = {
        "answered": answered,
        "current_step": str(current) if current else None,
        "label_definitions": [
            {"value": label, "label": read.label_name(label), "key": read.label_keys[label],
             "definition": read.label_definitions[label], "chosen": row.label == label}
            for label in read.labels
        ],
        "needs_evidence": bool(project.require_evidence and row.label and evidence_required(protocol, path)
                               and not row.evidence),
        "evidence_useful": evidence_required(protocol, path) if path else False,
    }
    if current is not None:
        current = str(current)
        panel["question"] = {
            "step": current,
            "text": read.step_questions[current],
            "definition": read.step_definitions[current],
            "options": list(read.step_options[current]),
            "positive": [e for e in examples if e.step == current and e.is_positive],
            "negative": [e for e in examples if e.step == current and not e.is_positive],
        }
    return panel


# --- queue and lead views -------------------------------------------------------------------------

def queue_for(project, user) -> dict:
    """An annotator's work in a project: unfinished and submitted assignments, counts."""
    mine = list(
        Assignment.objects.filter(project=project, annotator=user, is_qualification=False)
        .exclude(status=Assignment.Status.RELEASED)
        .select_related("turn__dialogue")
        .annotate(
            sentence_count=Count("turn__sentences", distinct=True),
            labelled=Count("sentence_annotations", filter=~Q(sentence_annotations__label=""), distinct=True),
        )
        .order_by("-assigned_at", "-id")
    )
    unfinished = [a for a in mine if a.status in UNFINISHED]
    submitted = [a for a in mine if a.status == Assignment.Status.SUBMITTED]
    # The pools "next item" claims from (drawn turns first; under single review a drawn turn takes one person).
    open_slots = any(turns.exists() for turns, _ in candidate_pools(project, user))
    return {
        "unfinished": sorted(unfinished, key=lambda a: (a.assigned_at, a.pk)),
        "submitted": submitted[:50],
        "submitted_count": len(submitted),
        "assigned_count": sum(1 for a in unfinished if a.status == Assignment.Status.ASSIGNED),
        "in_progress_count": sum(1 for a in unfinished if a.status == Assignment.Status.IN_PROGRESS),
        "has_more_work": bool(unfinished) or open_slots,
    }


def lead_assignments(project, *, show: str = "open", stale_after: timedelta = DEFAULT_STALE_AFTER) -> dict:
    """Who holds what, for the lead: unfinished assignments (or all) with their progress and staleness."""
    queryset = (
        Assignment.objects.filter(project=project, is_qualification=False)
        .select_related("annotator", "turn__dialogue")
        .annotate(
            sentence_count=Count("turn__sentences", distinct=True),
            labelled=Count("sentence_annotations", filter=~Q(sentence_annotations__label=""), distinct=True),
        )
        .order_by("assigned_at", "id")
    )
    if show == "open":
        queryset = queryset.filter(status__in=UNFINISHED)
    rows = list(queryset[:500])
    now = timezone.now()
    for row in rows:
        row.is_stale = is_stale(row.status, row.last_activity_at, row.assigned_at, now, stale_after)
        row.last_seen = row.last_activity_at or row.assigned_at
    by_annotator = (
        Assignment.objects.filter(project=project, is_qualification=False)
        .values("annotator__username")
        .annotate(
            open=Count("id", filter=Q(status__in=UNFINISHED)),
            submitted=Count("id", filter=Q(status=Assignment.Status.SUBMITTED)),
            released=Count("id", filter=Q(status=Assignment.Status.RELEASED)),
        )
        .order_by("annotator__username")
    )
    return {"rows": rows, "by_annotator": list(by_annotator), "stale_count": sum(r.is_stale for r in rows)}
