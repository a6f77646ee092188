"""Hooks through which an app built on the annotation core adds to it, without the core importing it.

The pre-labeler (``autolabel``) is such an app: its ``AppConfig.ready()`` registers what the export's
``prediction`` column, the annotation page's pre-labels and the claims page's severity comparison
read. A hook with nothing registered gives its empty answer, so the core works on its own.
"""

from __future__ import annotations

from collections.abc import Callable


class Hook:
    """One extension point: at most one provider (registering again replaces it), else the empty answer."""

    def __init__(self, name: str, empty: Callable[[], object]):
        self.name = name
        self.empty = empty
        self.provider: Callable | None = None

    def register(self, provider: Callable) -> None:
        self.provider = provider

    def __call__(self, *args):
        return self.empty() if self.provider is None else self.provider(*args)

    def __repr__(self):
        return f"<Hook {self.name}: {getattr(self.provider, '__qualname__', None) or 'nothing registered'}>"


# (project) -> bool: whether the project has any finished pre-labelling job (the export queries
# predictions only then).
has_predictions = Hook("has_predictions", lambda: False)
# (project, sentence ids) -> {sentence id: prediction}: each sentence's latest finished pre-label, an
# object with label, hallucinated, hallucinated_votes, abstentions, label_votes, job_id and job
# (model, samples, threshold).
latest_predictions = Hook("latest_predictions", dict)
# (prediction) -> {step id: value}: the voted values of the steps of other kinds than choice (multiple, scale,
# text) of one of those pre-labels, as the API's predictions show them (the export's ``prediction.values``).
prediction_values = Hook("prediction_values", dict)
# (project, turn) -> [prediction]: the pre-labels an annotator may see on the turn (label, sentence_id).
prelabels_for_annotator = Hook("prelabels_for_annotator", list)
# (project) -> {sentence id: severity 1-5}: the pre-labeler's latest severity rating of each sentence.
latest_severities = Hook("latest_severities", dict)

# (project, sentence ids) -> [{"kind", "owner", "sentence_id", "label", ...}]: what the pre-labeler keeps on
# these units (a lead's split or merge is refused while they exist, unless the lead resets them).
unit_dependents = Hook("unit_dependents", list)
# (project, sentence ids) -> None: remove what ``unit_dependents`` described (a lead's reset).
unit_dependents_remove = Hook("unit_dependents_remove", lambda: None)

HOOKS = (has_predictions, latest_predictions, prediction_values, prelabels_for_annotator, latest_severities,
         unit_dependents, unit_dependents_remove)
