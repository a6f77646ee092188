"""What the pre-labeler keeps about a unit (a sentence), for a lead's split or merge of the turn's units.

The annotation core asks through its hooks (``annotator/extensions.py``: ``unit_dependents``,
``unit_dependents_remove``), never importing this app: a unit with a pre-label, a severity rating or a
contrastive example built on it is not split or merged silently; a reset removes them, after the core has
kept what ``unit_dependents`` described in the change's audit.
"""

from __future__ import annotations

from .models import ContrastiveExample, Prediction, SeverityPrediction


def unit_dependents(project, sentence_ids) -> list[dict]:
    """One description per record of the pre-labeler on these sentences (kind, owner, sentence id, label...)."""
    found = []
    for prediction in (Prediction.objects.filter(job__project=project, sentence_id__in=sentence_ids)
                       .select_related("job").order_by("job_id", "sentence_id")):
        found.append({"kind": "pre-label", "owner": f"pre-labelling job {prediction.job_id} ({prediction.job.model})",
                      "sentence_id": prediction.sentence_id, "label": prediction.label,
                      "votes": prediction.label_votes})
    for rating in (SeverityPrediction.objects.filter(job__project=project, sentence_id__in=sentence_ids)
                   .order_by("job_id", "sentence_id")):
        found.append({"kind": "pre-labeler severity", "owner": f"severity job {rating.job_id}",
                      "sentence_id": rating.sentence_id, "label": str(rating.severity),
                      "note": rating.justification})
    for example in (ContrastiveExample.objects.filter(project=project, sentence_id__in=sentence_ids)
                    .order_by("sentence_id")):
        found.append({"kind": "contrastive example", "owner": "the pre-labeler's prompt",
                      "sentence_id": example.sentence_id, "label": example.right_label,
                      "note": example.explanation})
    return found


def unit_dependents_remove(project, sentence_ids) -> None:
    """Remove what ``unit_dependents`` described (the caller has kept the descriptions)."""
    Prediction.objects.filter(job__project=project, sentence_id__in=sentence_ids).delete()
    SeverityPrediction.objects.filter(job__project=project, sentence_id__in=sentence_ids).delete()
    ContrastiveExample.objects.filter(project=project, sentence_id__in=sentence_ids).delete()
