"""Read side of the finer views: the workspace panels, the triplet disputes, the claims reports."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

from django.db.models import Count, Q

from .. import extensions
from ..domain import claims, evidence
from ..models import Assignment, ClaimTriplet, EvidenceSpan, GoldLabel, Sentence, SentenceAnnotation, TripletAdjudication, TripletAnnotation, TripletGold
from ..domain.protocol.groups import reading
from ..projects.protocols import protocol_for
from ..domain.vocabulary import Severity, TripletLabel

# Keys of the triplet panel: letter and digit for each label, in this order.
TRIPLET_KEYS = {
    TripletLabel.ENTAILMENT: ("e", "1"),
    TripletLabel.NEUTRAL: ("n", "2"),
    TripletLabel.CONTRADICTION: ("c", "3"),
    TripletLabel.BAD_TRIPLET: ("b", "4"),
}
TRIPLET_HINTS = {
    TripletLabel.ENTAILMENT: "the reference supports it",
    TripletLabel.NEUTRAL: "the reference neither supports nor contradicts it",
    TripletLabel.CONTRADICTION: "the reference contradicts it",
    TripletLabel.BAD_TRIPLET: "it does not convey what the response says",
}


def triplet_options(chosen: str = "") -> list[dict]:
    return [
        {"value": label.value, "label": label.label, "key": keys[0], "digit": keys[1],
         "hint": TRIPLET_HINTS[label], "chosen": chosen == label.value}
        for label, keys in TRIPLET_KEYS.items()
    ]


@dataclass
class TripletRow:
    triplet: ClaimTriplet
    number: int
    sentence_number: int | None
    label: str
    options: list
    own: bool  # added by this annotator: may be edited or deleted

    @property
    def label_display(self):
        return TripletLabel(self.label).label if self.label else ""


def triplet_panel(assignment: Assignment, user) -> dict:
    """The triplets of the assignment's turn with the annotator's own labels (never another annotator's)."""
    triplets = list(ClaimTriplet.objects.filter(turn_id=assignment.turn_id).select_related("sentence"))
    mine = dict(TripletAnnotation.objects.filter(assignment_id=assignment.pk).values_list("triplet_id", "label"))
    rows = [
        TripletRow(
            triplet=t, number=n, sentence_number=t.sentence.index + 1 if t.sentence_id else None,
            label=mine.get(t.pk, ""), options=triplet_options(mine.get(t.pk, "")),
            own=t.source == "manual" and t.created_by_id == user.pk,
        )
        for n, t in enumerate(triplets, start=1)
    ]
    return {
        "triplet_rows": rows,
        "triplets_done": sum(1 for r in rows if r.label),
        "triplets_total": len(rows),
        "sentences": list(Sentence.objects.filter(turn_id=assignment.turn_id).order_by("index").values("pk", "index", "text")),
    }


def sentence_extras(project, annotation: SentenceAnnotation | None) -> dict:
    """What the severity / error type panel of one sentence shows."""
    label = annotation.label if annotation else ""
    read = reading(protocol_for(project))
    return {
        "show_severity": bool(project.enable_severity and label in read.severity_labels),
        "show_error_type": bool(project.enable_error_types and label in read.error_type_labels),
        "severity": claims.effective_severity(read, label, annotation.severity) if annotation else None,
        "justification": annotation.justification if annotation else "",
        "error_type": annotation.error_type if annotation else "",
        "severity_options": [{"value": s.value, "label": s.label} for s in Severity],
        "error_types": list(project.error_types or []),
    }


# --------------------------------------------------------------------------- disputes


def triplet_disputes(project, user, status=TripletAdjudication.Status.OPEN):
    """Open (or resolved) triplet disputes with each annotator's label, for adjudicators."""
    disputes = list(
        TripletAdjudication.objects.filter(turn__dialogue__project=project, status=status)
        .exclude(turn__assignments__annotator=user)
        .select_related("triplet", "turn__dialogue", "triplet__sentence", "adjudicator")
        .order_by("created_at", "id")[:200]
    )
    labels = defaultdict(list)
    for triplet_id, name, label in (
        TripletAnnotation.objects.filter(
            triplet_id__in=[d.triplet_id for d in disputes], assignment__status=Assignment.Status.SUBMITTED,
        ).order_by("assignment__annotator__username").values_list("triplet_id", "assignment__annotator__username", "label")
    ):
        labels[triplet_id].append({"annotator": name, "label": label})
    for dispute in disputes:
        dispute.given = labels.get(dispute.triplet_id, [])
        dispute.options = triplet_options(dispute.label)
    return disputes


# --------------------------------------------------------------------------- reports


def _group(model: str) -> str:
    return model or "(unknown model)"


def _triplet_tallies(rows) -> list[dict]:
    return [{"model": model, "tally": tally, "rows": tally.rows()} for model, tally in claims.tally_triplets(rows).items()]


def triplet_report(project) -> dict:
    """RefChecker view per generator model: gold labels, imported labels, annotator agreement and accuracy."""
    import numpy as np  # here, not at the top: the annotation screen reads this module and needs no NumPy (issue 49)

    from ..domain import agreement

    triplets = ClaimTriplet.objects.filter(turn__dialogue__project=project, turn__is_qualification=False)
    total = triplets.count()
    gold_rows = [
        (_group(model), turn_id, label)
        for model, turn_id, label in TripletGold.objects.filter(triplet__in=triplets).values_list(
            "triplet__turn__dialogue__generator_model", "triplet__turn_id", "label")
    ]
    reference_rows = [
        (_group(model), turn_id, label)
        for model, turn_id, label in triplets.exclude(reference_label="").values_list(
            "turn__dialogue__generator_model", "turn_id", "reference_label")
    ]
    # Annotator pairs on the same triplet (double annotation): agreement over the four labels.
    given = defaultdict(list)
    for triplet_id, label in TripletAnnotation.objects.filter(
        triplet__in=triplets, assignment__status=Assignment.Status.SUBMITTED, assignment__is_qualification=False,
    ).values_list("triplet_id", "label"):
        given[triplet_id].append(claims.triplet_label_index(label))
    n_values = len(claims.TRIPLET_LABELS)
    counts = np.zeros((len(given), n_values), dtype=np.int32)
    for row, values in enumerate(given.values()):
        for value in values:
            counts[row, value] += 1
    measures = agreement.measures(counts) if len(given) else None
    # Against the imported RefChecker labels: gold, and every annotator label.
    reference = dict(triplets.exclude(reference_label="").values_list("pk", "reference_label"))
    gold = dict(TripletGold.objects.filter(triplet__in=triplets).values_list("triplet_id", "label"))
    versus = {}
    pairs_gold = [(claims.triplet_label_index(reference[t]), claims.triplet_label_index(g))
                  for t, g in gold.items() if t in reference]
    pairs_annotators = [(claims.triplet_label_index(reference[t]), v)
                        for t, values in given.items() if t in reference for v in values]
    for name, pairs in (("gold", pairs_gold), ("annotators", pairs_annotators)):
        if pairs:
            first, second = np.array(pairs).T
            confusion = agreement.confusion_matrix(first, second, n_values)
            versus[name] = {"n": len(pairs), "accuracy": agreement.accuracy(confusion),
                            "kappa": agreement.cohen_kappa(confusion)}
    return {
        "triplets": total,
        "with_gold": len(gold),
        "open_disputes": TripletAdjudication.objects.filter(
            triplet__in=triplets, status=TripletAdjudication.Status.OPEN).count(),
        "gold": _triplet_tallies(gold_rows),
        "reference": _triplet_tallies(reference_rows),
        "agreement": measures,
        "versus_reference": versus,
        "labels": [label.label for label in claims.JUDGED_TRIPLET_LABELS],
    }


def hallucination_rows(project) -> list[tuple]:
    """(generator model, turn id, gold label, severity, words) of every gold sentence of the project."""
    rows = (
        GoldLabel.objects.filter(sentence__turn__dialogue__project=project, sentence__turn__is_qualification=False)
        .values_list("sentence__turn__dialogue__generator_model", "sentence__turn_id", "label", "severity",
                     "sentence__text")
        .order_by()
    )
    return [(_group(model), turn, label, severity, claims.word_count(text)) for model, turn, label, severity, text in rows]


def hallucination_report(project, threshold: int | None, rows: list[tuple] | None = None) -> list[dict]:
    """HalluDetect's HPT and token accuracy per generator model, from gold sentence labels.

    ``rows`` (from ``hallucination_rows``) lets a caller tally them at several thresholds with one query.
    """
    tallies = claims.tally_hallucinations(reading(protocol_for(project)),
                                          rows if rows is not None else hallucination_rows(project), threshold=threshold)
    return [{"model": model, "tally": tally,
             "severities": [tally.severity_counts.get(s.value, 0) for s in Severity]} for model, tally in tallies.items()]


def error_type_report(project) -> list[dict]:
    read = reading(protocol_for(project))
    rows = (
        GoldLabel.objects.filter(sentence__turn__dialogue__project=project, label__in=sorted(read.error_type_labels))
        .values_list("sentence__turn__dialogue__generator_model", "label", "error_type")
        .order_by()
    )
    distribution = claims.error_type_distribution(
        read, ((_group(model), label, error_type) for model, label, error_type in rows), list(project.error_types or []))
    return [{"model": model, **entry} for model, entry in distribution.items()]



def evidence_report(project) -> dict:
    """PROBE view: how many answers that need evidence carry it (the labels whose path has an answer or which
    the protocol marks as needing evidence), and how far two annotators' evidence overlaps."""
    read = reading(protocol_for(project))
    supported = [label for label in read.labels if label in read.supported_labels]
    submitted = SentenceAnnotation.objects.filter(
        assignment__project=project, assignment__status=Assignment.Status.SUBMITTED,
        assignment__is_qualification=False,
    )
    wanted = submitted.filter(label__in=supported)
    by_label = {
        row["label"]: row
        for row in wanted.values("label").annotate(
            total=Count("id", distinct=True),
            with_evidence=Count("id", filter=Q(evidence__isnull=False), distinct=True),
        )
    }
    coverage = []
    for label in supported:
        row = by_label.get(label, {"total": 0, "with_evidence": 0})
        coverage.append({"label": read.label_name(label), "total": row["total"], "with_evidence": row["with_evidence"],
                         "share": row["with_evidence"] / row["total"] if row["total"] else None})
    totals = {"total": sum(r["total"] for r in coverage), "with_evidence": sum(r["with_evidence"] for r in coverage)}
    totals["share"] = totals["with_evidence"] / totals["total"] if totals["total"] else None
    # Overlap: every pair of submitted annotations of the same sentence where both annotators
    # judged it faithful / grounded (evidence was expected of both).
    spans = defaultdict(list)
    for annotation_id, start, end in EvidenceSpan.objects.filter(annotation__in=wanted).values_list(
            "annotation_id", "start", "end"):
        spans[annotation_id].append((start, end))
    per_sentence = defaultdict(list)
    for annotation_id, sentence_id in wanted.values_list("id", "sentence_id"):
        per_sentence[sentence_id].append(annotation_id)
    pairs = []
    for ids in per_sentence.values():
        ids.sort()
        for i in range(len(ids)):
            for j in range(i + 1, len(ids)):
                pairs.append((spans.get(ids[i], []), spans.get(ids[j], [])))
    return {"coverage": coverage, "totals": totals, "overlap": evidence.summarise(pairs), "pairs": len(pairs)}


def prelabel_severity_report(project) -> dict:
    """The pre-labeler's severity (latest severity job per sentence) against the gold severity.

    The auto-labeller app builds on this one and registers the reading (see annotator/extensions.py)."""
    latest = extensions.latest_severities(project)
    gold = dict(GoldLabel.objects.filter(sentence_id__in=list(latest), severity__isnull=False)
                .values_list("sentence_id", "severity"))
    pairs = [(latest[s], g) for s, g in gold.items()]
    n = len(pairs)
    return {
        "predicted": len(latest),
        "n": n,
        "exact": sum(p == g for p, g in pairs) / n if n else None,
        "within_one": sum(abs(p - g) <= 1 for p, g in pairs) / n if n else None,
        "mean_abs_diff": sum(abs(p - g) for p, g in pairs) / n if n else None,
    }
