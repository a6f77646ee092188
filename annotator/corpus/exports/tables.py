"""The export's sparse tables (annotations, adjudications, triplets, pre-labels), read for a chunk of
turns at a time and only when the project has any, and the JSON shaping the export shares with them.
"""

from __future__ import annotations

import json
from collections import defaultdict
from functools import lru_cache

from django.db.models import TextField
from django.db.models.functions import Cast

from annotator import extensions
from annotator.domain.protocol.document import default_protocol
from annotator.corpus.imports.importers import IMPORTED_TRIPLET_EXTRAS
from annotator.models import Adjudication, Assignment, ClaimTriplet, DrawnTurn, EvidenceSpan, SentenceAnnotation, TripletAnnotation, Turn


def _text(field):
    """A JSON column read as its text: decoding is then done once per distinct value (see _json)."""
    return Cast(field, output_field=TextField())


@lru_cache(maxsize=1024)
def _shared_path(text, protocol=None):
    """Decision paths repeat (one per label): decode each once, in the order of the project's ``protocol``.
    The dict is shared: do not modify it."""
    return (protocol or default_protocol()).ordered(json.loads(text))


# The export must not depend on the database: PostgreSQL's jsonb sorts object keys,
# SQLite keeps them as written. So paths come in protocol order, the objects the
# application builds in a fixed key order, and free-form metadata with sorted keys.
ANNOTATION_KEYS = ("annotator", "label", "path", "note", "severity", "justification", "error_type", "evidence")
ADJUDICATION_KEYS = ("adjudicator", "label", "path", "reason", "evidence")
EVIDENCE_KEYS = ("start", "end", "text")
TRIPLET_ANNOTATION_KEYS = ("annotator", "label")
# A pre-label's keys, in the order the export writes them (an imported one is written again in this order, whatever
# order the database kept its keys in).
PREDICTION_KEYS = ("label", "hallucinated", "hallucinated_votes", "stage1_kind", "abstentions", "label_votes", "values",
                   "job", "model", "samples", "threshold")
# What a label of an older protocol version was given as (annotator.corpus.exports.carried).
GIVEN_UNDER_KEYS = ("version", "label", "path")


def _sorted(value):
    if isinstance(value, dict):
        return {key: _sorted(value[key]) for key in sorted(value)}
    if isinstance(value, list):
        return [_sorted(item) for item in value]
    return value


def _shaped(obj, keys, protocol=None):
    """``obj`` with ``keys`` first in that order, any other key after them, sorted (a path in the order of the
    project's ``protocol``)."""
    if not isinstance(obj, dict):
        return obj
    out = {key: obj[key] for key in keys if key in obj}
    for key in sorted(obj):
        if key not in out:
            out[key] = _sorted(obj[key])
    if isinstance(out.get("path"), dict):
        out["path"] = (protocol or default_protocol()).ordered(out["path"])
    if isinstance(out.get("given_under"), dict):
        out["given_under"] = _shaped(out["given_under"], GIVEN_UNDER_KEYS, protocol)
    if isinstance(out.get("evidence"), list):
        out["evidence"] = [_shaped(span, EVIDENCE_KEYS) for span in out["evidence"]]
    return out


def prediction_shaped(obj):
    """An imported pre-label as the export writes a job's: its keys in order, its votes sorted by label and its
    values by step id (the database may keep a JSON object's keys in another order: PostgreSQL's jsonb does)."""
    out = _shaped(obj, PREDICTION_KEYS)
    if isinstance(out, dict):
        for key in ("label_votes", "values"):
            if isinstance(out.get(key), dict):
                out[key] = _sorted(out[key])
    return out


def _json(text):
    if text is None:
        return None
    if text == "{}":
        return {}
    if text == "[]":
        return []
    return json.loads(text)


def _side_tables_in_use(project) -> dict[str, bool]:
    """Which of the sparse tables hold anything for the project: the others are not queried per chunk."""
    turns = Turn.objects.filter(dialogue__project=project)
    return {
        "annotations": SentenceAnnotation.objects.filter(
            assignment__turn__dialogue__project=project, assignment__status=Assignment.Status.SUBMITTED).exists(),
        "adjudications": Adjudication.objects.filter(turn__in=turns, status=Adjudication.Status.RESOLVED).exists(),
        "triplets": ClaimTriplet.objects.filter(turn__in=turns).exists(),
        "predictions": extensions.has_predictions(project),
        "draws": DrawnTurn.objects.filter(draw__project=project).exists(),
    }


def _predictions(project, sentence_ids):
    """The latest finished LLM pre-label of each sentence (for analysis; not re-imported as a human label).

    The pre-labeler app builds on this one and registers the reading (see annotator/extensions.py)."""
    out = {}
    for sentence_id, p in extensions.latest_predictions(project, sentence_ids).items():
        prediction = out[sentence_id] = {  # in the order of PREDICTION_KEYS
            "label": p.label, "hallucinated": p.hallucinated, "hallucinated_votes": p.hallucinated_votes,
            # The stage-1 answer of the agreeing samples (the family it leads into): a pre-label without a label
            # counts through it in the evaluation and the faithfulness report, so an export reproduces them.
            "stage1_kind": p.stage1_kind,
            "abstentions": p.abstentions, "label_votes": _sorted(p.label_votes),
        }
        # The voted values of the multiple, scale and text steps, as the API shows them: the kind steps' scores
        # are computed from them, so an export reproduces those too. Only when some step has one: the pre-label
        # of a protocol of choice steps is written as it always was.
        if values := extensions.prediction_values(p):
            prediction["values"] = _sorted(values)
        prediction.update(job=p.job_id, model=p.job.model, samples=p.job.samples, threshold=p.job.threshold)
    return out


def _evidence(**filters):
    spans = defaultdict(list)
    for owner, start, end, text in (
        EvidenceSpan.objects.filter(**filters)
        .order_by("start", "id")
        .values_list(next(iter(filters)).split("__")[0] + "_id", "start", "end", "text")
    ):
        spans[owner].append({"start": start, "end": end, "text": text})
    return spans


def _annotations(turn_ids, protocol=None, carrier=None):
    """Submitted annotations per sentence id: who said what, by which path, with which evidence; with
    ``carrier`` (a project with work under older protocol versions) in the current version's labels."""
    rows = list(
        SentenceAnnotation.objects.filter(
            sentence__turn_id__in=turn_ids, assignment__status=Assignment.Status.SUBMITTED,
            assignment__is_qualification=False,
        )
        .order_by("sentence_id", "assignment__annotator__username", "id")
        .values_list("id", "sentence_id", "assignment__annotator__username", "label", "path", "note", "severity",
                     "justification", "error_type", "assignment__protocol_version_id")
    )
    if not rows:
        return {}
    evidence = _evidence(annotation__sentence__turn_id__in=turn_ids)
    out = defaultdict(list)
    for pk, sentence_id, annotator, label, path, note, severity, justification, error_type, version_id in rows:
        annotation = {
            "annotator": annotator, "label": label, "path": (protocol or default_protocol()).ordered(path or {}), "note": note, "severity": severity,
            "justification": justification, "error_type": error_type, "evidence": evidence.get(pk, []),
        }
        out[sentence_id].append(carrier.record(annotation, version_id) if carrier is not None else annotation)
    return out


def _adjudications(turn_ids, protocol=None, carrier=None):
    """The latest resolved adjudication per sentence id (``carrier``: as for _annotations; an adjudication's
    label is the version's that was current when it was resolved)."""
    rows = list(
        Adjudication.objects.filter(turn_id__in=turn_ids, status=Adjudication.Status.RESOLVED)
        .order_by("sentence_id", "resolved_at", "id")
        .values_list("id", "sentence_id", "adjudicator__username", "label", "path", "reason", "resolved_at")
    )
    if not rows:
        return {}
    evidence = _evidence(adjudication__turn_id__in=turn_ids)
    out = {}
    for pk, sentence_id, adjudicator, label, path, reason, resolved_at in rows:
        adjudication = {"adjudicator": adjudicator, "label": label, "path": (protocol or default_protocol()).ordered(path or {}), "reason": reason,
                        "evidence": evidence.get(pk, [])}
        out[sentence_id] = (carrier.record(adjudication, carrier.adjudication_version(resolved_at))
                            if carrier is not None else adjudication)
    return out


def _triplets(turn_ids):
    rows = list(
        ClaimTriplet.objects.filter(turn_id__in=turn_ids)
        .order_by("turn_id", "index", "id")
        .values_list("id", "turn_id", "index", "sentence__index", "head", "relation", "tail", "source",
                     "reference_label", "metadata", "gold__label", "gold__provenance", "gold__reason")
    )
    if not rows:
        return {}
    labels = defaultdict(list)
    for triplet_id, annotator, label in (
        TripletAnnotation.objects.filter(triplet__turn_id__in=turn_ids, assignment__status=Assignment.Status.SUBMITTED)
        .order_by("triplet_id", "assignment__annotator__username", "id")
        .values_list("triplet_id", "assignment__annotator__username", "label")
    ):
        labels[triplet_id].append({"annotator": annotator, "label": label})
    out = defaultdict(list)
    for (pk, turn_id, index, sentence_index, head, relation, tail, source, reference_label, metadata,
         gold_label, gold_provenance, gold_reason) in rows:
        metadata = dict(metadata or {})
        imported = [_shaped(a, TRIPLET_ANNOTATION_KEYS) for a in metadata.pop(IMPORTED_TRIPLET_EXTRAS, [])]
        metadata = _sorted(metadata)
        triplet = {
            "index": index, "sentence_index": sentence_index, "head": head, "relation": relation, "tail": tail,
            "source": source, "reference_label": reference_label, "annotations": imported + labels.get(pk, []),
            "metadata": metadata,
        }
        if gold_label:  # the triplet gold of double annotation (claims); absent when there is none
            triplet["gold"] = {"label": gold_label, "provenance": gold_provenance, "reason": gold_reason}
        out[turn_id].append(triplet)
    return out
