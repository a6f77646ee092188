"""What hangs off a turn's units, for a lead's split or merge (``unit_services``): found, described, removed.

Two kinds of records depend on a unit:

- *blocking*: a submitted annotation, gold, an adjudication (open or resolved), and what the pre-labeler keeps
  (pre-labels, severity ratings, contrastive examples; read through ``extensions``). A split or merge is
  refused while any of these exists on the units it changes, unless the lead explicitly resets them;
- *unsubmitted work*: the annotations of slots still being worked on (or released, kept for the audit). They
  are about a unit that is about to change, so they are removed with every change; an annotator working on
  the turn labels the new units.

Everything removed is first described (owner, unit, label, path, note, evidence, a lead's feedback) into the change's audit
(``SegmentationChange.reset``), so nothing is lost silently. Records that do not judge the unit (questions,
claim triplets, the annotation history, gold history, flags) are never removed: ``unit_services`` keeps or
moves them.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from annotator import extensions
from annotator.gold.services import gold_version_bump
from annotator.models import Adjudication, Assignment, GoldEvent, GoldLabel, SentenceAnnotation

SUBMITTED_ANNOTATION = "submitted annotation"


@dataclass
class Dependents:
    """The records on some units of a turn: ``blocking`` ones and ``unsubmitted`` work, as audit descriptions."""

    blocking: list[dict] = field(default_factory=list)
    unsubmitted: list[dict] = field(default_factory=list)
    annotation_ids: list[int] = field(default_factory=list)
    gold_ids: list[int] = field(default_factory=list)
    adjudication_ids: list[int] = field(default_factory=list)

    def summary(self) -> str:
        """What blocks, in words: "2 submitted annotations (ada, bob), gold (agreement), 1 pre-label"."""
        counts: dict[str, list[str]] = {}
        for record in self.blocking:
            counts.setdefault(record["kind"], []).append(record.get("owner", ""))
        parts = []
        for kind, owners in counts.items():
            noun = kind if len(owners) == 1 else f"{kind}s"
            named = sorted({owner for owner in owners if owner})
            parts.append(f"{len(owners)} {noun}" + (f" ({', '.join(named)})" if named else ""))
        return ", ".join(parts)


def _annotation_record(annotation: SentenceAnnotation, kind: str, unit_index: int) -> dict:
    return {"kind": kind, "owner": annotation.assignment.annotator.get_username(), "unit": unit_index,
            "unit_text": annotation.sentence.text, "label": annotation.label, "path": annotation.path,
            "note": annotation.note, "severity": annotation.severity, "error_type": annotation.error_type,
            "assignment": annotation.assignment_id,
            "evidence": [{"start": e.start, "end": e.end, "text": e.text} for e in annotation.evidence.all()],
            # A lead's feedback on it goes with it (it hangs off the annotation): kept here, as the label is.
            "feedback": [{"lead": f.lead.get_username(), "expected_label": f.expected_label, "comment": f.comment,
                          "created_at": f.created_at.isoformat(),
                          "acknowledged_at": f.acknowledged_at.isoformat() if f.acknowledged_at else None}
                         for f in annotation.feedback.all()]}


def dependents_of(project, units) -> Dependents:
    """The records on ``units`` (Sentence rows of one turn), read under the caller's locks."""
    index_of = {unit.pk: unit.index for unit in units}
    text_of = {unit.pk: unit.text for unit in units}
    ids = list(index_of)
    found = Dependents()
    annotations = (SentenceAnnotation.objects.filter(sentence_id__in=ids)
                   .select_related("assignment__annotator", "sentence").prefetch_related("evidence", "feedback__lead")
                   .order_by("sentence__index", "assignment_id"))
    for annotation in annotations:
        status = annotation.assignment.status
        if status == Assignment.Status.SUBMITTED:
            found.blocking.append(_annotation_record(annotation, SUBMITTED_ANNOTATION, index_of[annotation.sentence_id]))
        else:
            kind = "released annotation" if status == Assignment.Status.RELEASED else "unsubmitted annotation"
            found.unsubmitted.append(_annotation_record(annotation, kind, index_of[annotation.sentence_id]))
        found.annotation_ids.append(annotation.pk)
    for gold in GoldLabel.objects.filter(sentence_id__in=ids).select_related("decided_by").order_by("sentence_id"):
        found.blocking.append({"kind": "gold label", "owner": gold.get_provenance_display().lower(),
                               "unit": index_of[gold.sentence_id], "unit_text": text_of[gold.sentence_id],
                               "label": gold.label, "path": gold.path, "note": gold.reason,
                               "decided_by": gold.decided_by.get_username() if gold.decided_by else ""})
        found.gold_ids.append(gold.pk)
    for adjudication in (Adjudication.objects.filter(sentence_id__in=ids).select_related("adjudicator")
                         .order_by("sentence_id", "id")):
        kind = "open adjudication" if adjudication.status == Adjudication.Status.OPEN else "resolved adjudication"
        found.blocking.append({"kind": kind, "owner": adjudication.adjudicator.get_username()
                               if adjudication.adjudicator else "", "unit": index_of[adjudication.sentence_id],
                               "unit_text": text_of[adjudication.sentence_id], "label": adjudication.label,
                               "path": adjudication.path, "note": adjudication.reason})
        found.adjudication_ids.append(adjudication.pk)
    for record in extensions.unit_dependents(project, ids):
        sentence_id = record["sentence_id"]
        found.blocking.append({**record, "unit": index_of[sentence_id], "unit_text": text_of[sentence_id]})
    return found


def dependents_remove(project, units, found: Dependents, *, actor, because: str) -> None:
    """Remove what ``found`` describes (the caller keeps the descriptions in the audit)."""
    SentenceAnnotation.objects.filter(pk__in=found.annotation_ids).delete()
    for gold in GoldLabel.objects.filter(pk__in=found.gold_ids):
        # Gold's own history says where it went, as for any other change of gold.
        GoldEvent.objects.create(sentence_id=gold.sentence_id, old_label=gold.label, new_label="", provenance="",
                                 reason=because, actor=actor)
    GoldLabel.objects.filter(pk__in=found.gold_ids).delete()
    Adjudication.objects.filter(pk__in=found.adjudication_ids).delete()
    extensions.unit_dependents_remove(project, [unit.pk for unit in units])
    if found.gold_ids or found.adjudication_ids:
        gold_version_bump(project.pk)
