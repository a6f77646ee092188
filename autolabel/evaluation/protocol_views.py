"""What the evaluation and the faithfulness report read of a protocol: its views, macro, families and stage one.

The protocol's document names the evaluation views (each with its positive labels: what it detects), the macro
over some of them, the hallucination group and the families (docs/protocols.md). This module turns them into
the few questions the scores ask of one sentence, once per document (``scoring(protocol)``, cached by checksum):

- is the gold positive in a view? (its label is one of the view's positive labels);
- is the prediction positive in a view? A prediction with a label is, when the label is one of the view's
  positive labels. A prediction whose samples stopped before a label (CogniBench: the cognitive sentences whose
  stage 2 failed) still has a verdict (hallucinated or not) and the answer its samples gave at stage one (its
  *kind*); it could stand for any label of that verdict reachable through that answer, and it counts in a view
  when every one of those labels is positive there. CogniBench: "hallucinated, cognitive" is positive in the
  cognitive view and the pooled one, not in the factual view; the old code counted it the same way;
- does the sentence count in a view at all? Its gold label is within the view's ``scope`` (every label when the
  document names none);
- which view is the pooled one (every hallucination label positive, every label in scope, reported as
  ``overall`` too)? The document's, or one derived from its hallucination group when it declares none.

``job_protocol(job)`` is the one place the evaluation and the faithfulness report get a job's protocol.
"""

from __future__ import annotations

from dataclasses import dataclass

from annotator.domain.protocol.cache import ProtocolCache
from annotator.domain.protocol.groups import EvaluationView, Family, reading
from annotator.projects.protocols import protocol_of_version, version_caption

# The pooled view keeps this second name in the reports (it was called so before the macro existed), so that
# existing clients keep reading it.
LEGACY_POOLED = "overall"
# The pooled view derived from ``groups.hallucination`` when the document declares none (its id is
# ``overall`` unless a view of the document already has that id).
DERIVED_POOLED = "any_hallucination_derived"
DERIVED_POOLED_NAME = "any hallucination (pooled, from the hallucination group)"


def job_protocol(job):
    """The protocol a job's predictions are scored against: the version it labelled with (recorded at its
    creation; built-in for a job older than that record, when the pre-labeler spoke CogniBench only)."""
    return protocol_of_version(job.protocol_version)


def job_protocol_caption(job) -> str:
    """The line naming the protocol version a job's figures are in: the job's, not the project's current one."""
    return version_caption(job.project, job.protocol_version, f"the version job #{job.pk} labelled with")


@dataclass(frozen=True)
class Scoring:
    views: tuple  # EvaluationView, in the document's order
    names: dict  # view id (and the macro's id) -> its name in the document
    macro_id: str  # "" when the document has no macro
    macro_views: tuple
    pooled: str  # the view whose positive labels are the whole hallucination group ("" if none)
    hallucinated: frozenset
    labels: tuple
    families: tuple  # Family
    reachable: dict  # stage-one answer -> labels reachable through it

    @property
    def view_ids(self) -> tuple:
        return tuple(view.id for view in self.views)

    @property
    def compared(self) -> tuple:
        """The views, then the macro: what a comparison of two jobs reports."""
        return self.view_ids + ((self.macro_id,) if self.macro_id else ())

    def kind_labels(self, kind: str) -> frozenset | None:
        """The labels a prediction's *kind* stands for: the pre-labeler records the family its samples' stage one
        led into (``Prediction.stage1_kind``); a stage-one answer value is read too (CogniBench's families and
        answers share their ids). None when the kind names neither."""
        family = next((family for family in self.families if family.id == kind), None)
        if family is not None:
            return frozenset(family.labels)
        return self.reachable.get(kind or "")

    def candidates(self, kind: str, hallucinated: bool) -> frozenset:
        """The labels a prediction without a label could stand for: those of its verdict within its kind (any
        label when it has none)."""
        labels = self.kind_labels(kind) or frozenset(self.labels)
        return frozenset(label for label in labels if (label in self.hallucinated) == bool(hallucinated))

    @staticmethod
    def in_scope(view: EvaluationView, gold: str) -> bool:
        """Whether a sentence counts in a view at all: its gold label is within the view's ``scope`` (every label
        when the document gives none). Outside it a sentence is neither gold- nor predicted-positive there: a
        prediction on it is no false alarm of that view (docs/autolabel.md, *Definitions*)."""
        return view.scope is None or gold in view.scope

    def narrow(self, view: EvaluationView) -> bool:
        """Whether a view's scope leaves some label out (its figures then count fewer sentences than the pooled
        view's, and the pages say so beside them)."""
        return view.scope is not None and not set(self.labels) <= view.scope

    def predicted_positive(self, view: EvaluationView, decided) -> bool:
        if decided.label:
            return decided.label in view.positive
        labels = self.candidates(decided.kind, decided.hallucinated)
        return bool(labels) and labels <= view.positive

    def family_of_kind(self, kind: str) -> Family | None:
        """The family every label of a kind belongs to (None if they span several)."""
        labels = self.kind_labels(kind)
        if not labels:
            return None
        return next((family for family in self.families if labels <= set(family.labels)), None)


_BY_CHECKSUM: ProtocolCache[Scoring] = ProtocolCache()


def scoring(protocol) -> Scoring:
    return _BY_CHECKSUM.get_or_make(protocol.checksum, lambda: _read(protocol))


def _reachable(read) -> dict:
    """Per answer value: the labels of the paths through it, when those paths agree up to it (the answer sits at
    the same place in each: a stage-one answer such as CogniBench's factual / cognitive)."""
    through: dict[str, list] = {}
    for label, paths in read.label_paths.items():
        for path in paths:
            for value in set(path.values()):
                through.setdefault(value, []).append((label, path))
    found = {}
    for value, rows in through.items():
        prefixes = {tuple(_prefix(path, value).items()) for _, path in rows}
        if len(prefixes) == 1:
            found[value] = frozenset(label for label, _ in rows)
    return found


def _prefix(path: dict, value: str) -> dict:
    prefix = {}
    for step, answer in path.items():
        prefix[step] = answer
        if answer == value:
            break
    return prefix


def _read(protocol) -> Scoring:
    read = reading(protocol)
    macro = protocol.macro
    names = {view.id: view.name for view in read.views}
    if macro:
        names[macro.id] = macro.name
    views = read.views
    pooled = next((view.id for view in views if view.positive == read.hallucinated and view.scope is None
                   or view.positive == read.hallucinated and set(read.labels) <= view.scope), "")
    if not pooled and read.hallucinated:
        # The document names no view of every hallucination label: the pooled view is derived from its
        # hallucination group, so that ``overall`` (any hallucination, pooled) exists on every protocol.
        taken = {view.id for view in views}
        pooled = LEGACY_POOLED if LEGACY_POOLED not in taken else DERIVED_POOLED
        views = views + (EvaluationView(pooled, DERIVED_POOLED_NAME, read.hallucinated, None),)
        names[pooled] = DERIVED_POOLED_NAME
    return Scoring(
        views=views, names=names, macro_id=macro.id if macro else "",
        macro_views=tuple(macro.views) if macro else (), pooled=pooled, hallucinated=read.hallucinated,
        labels=read.labels, families=read.families, reachable=_reachable(read),
    )
