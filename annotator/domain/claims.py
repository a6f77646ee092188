"""The finer views of a hallucination, as pure rules and sums (no database).

- RefChecker: claim triplets labelled Entailment / Neutral / Contradiction (or
  marked a bad triplet). A response's verdict follows RefChecker's strict
  rule: contradictory if any triplet is, else neutral if any is, else entailed.
  Bad triplets say nothing about the response and are left out of verdicts
  and shares (they are counted on their own).
- HalluDetect: a severity 1-5 and a justification for a sentence whose label the
  protocol's ``severity`` group names;
  hallucinations per turn (HPT) and token accuracy (the share of words in
  sentences that are not hallucinated), optionally keeping only hallucinations
  of at least a severity threshold.
- Face4RAG: an error type, from the project's list, for a sentence whose label
  the protocol's ``error_type`` group names.

Which labels are hallucinations, take a severity or an error type comes from the
project's protocol (``read``: ``protocol.groups.reading(protocol)``).

Selectors fetch rows and hand them to these functions; the unit tests feed
them by hand.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from . import languages
from .vocabulary import Severity, TripletLabel

JUDGED_TRIPLET_LABELS = (TripletLabel.ENTAILMENT, TripletLabel.NEUTRAL, TripletLabel.CONTRADICTION)
TRIPLET_LABELS = tuple(label.value for label in TripletLabel)
MAX_JUSTIFICATION_LENGTH = 5000


class ClaimsRuleError(ValueError):
    """A value the rules refuse; the message is meant for the user."""


# --------------------------------------------------------------------------- RefChecker


def response_verdict(labels: Iterable[str]) -> str | None:
    """RefChecker's strict rule over one response's triplet labels; None when no triplet was judged."""
    judged = {str(label) for label in labels if label and label != TripletLabel.BAD_TRIPLET}
    for verdict in (TripletLabel.CONTRADICTION, TripletLabel.NEUTRAL, TripletLabel.ENTAILMENT):
        if verdict.value in judged:
            return verdict.value
    return None


@dataclass
class TripletTally:
    """Triplet labels of a group of responses (e.g. one generator model)."""

    responses: int = 0  # responses with at least one judged triplet
    triplets: int = 0  # judged triplets (bad ones excluded)
    bad: int = 0
    label_counts: Counter = field(default_factory=Counter)
    verdict_counts: Counter = field(default_factory=Counter)

    def share(self, label: str) -> float | None:
        """Share of judged triplets with this label."""
        return self.label_counts[label] / self.triplets if self.triplets else None

    def verdict_share(self, label: str) -> float | None:
        """Share of responses whose strict verdict is this label."""
        return self.verdict_counts[label] / self.responses if self.responses else None

    @property
    def contradictory_share(self) -> float | None:
        return self.verdict_share(TripletLabel.CONTRADICTION)

    def rows(self) -> list[dict]:
        return [
            {"label": label.value, "name": label.label, "triplets": self.label_counts[label.value],
             "share": self.share(label.value), "responses": self.verdict_counts[label.value],
             "response_share": self.verdict_share(label.value)}
            for label in JUDGED_TRIPLET_LABELS
        ]


def tally_triplets(rows: Iterable[tuple[str, object, str]]) -> dict[str, TripletTally]:
    """Per group: label shares and strict verdicts, from (group, response id, triplet label) rows."""
    by_response: dict[tuple[str, object], list[str]] = {}
    for group, response, label in rows:
        if label:
            by_response.setdefault((group, response), []).append(str(label))
    tallies: dict[str, TripletTally] = {}
    for (group, _response), labels in by_response.items():
        tally = tallies.setdefault(group, TripletTally())
        for label in labels:
            if label == TripletLabel.BAD_TRIPLET:
                tally.bad += 1
            else:
                tally.triplets += 1
                tally.label_counts[label] += 1
        verdict = response_verdict(labels)
        if verdict is not None:
            tally.responses += 1
            tally.verdict_counts[verdict] += 1
    return dict(sorted(tallies.items()))


def triplet_label_index(label: str) -> int:
    return TRIPLET_LABELS.index(str(label))


def parse_triplet_label(value: str) -> TripletLabel:
    """A triplet label from a form value or an LLM reply (case-insensitive; 'bad triplet' accepted)."""
    text = (value or "").strip().lower()
    for label in TripletLabel:
        if text in {label.value.lower(), label.label.lower()}:
            return label
    raise ClaimsRuleError(f"Unknown triplet label {value!r}: use Entailment, Neutral, Contradiction or bad.")


def clean_triplet(head: str, relation: str, tail: str, max_length: int = 1000) -> tuple[str, str, str]:
    """The three parts of a triplet, trimmed; each must be non-empty."""
    parts = []
    for name, value in (("head", head), ("relation", relation), ("tail", tail)):
        value = " ".join(str(value or "").split())
        if not value:
            raise ClaimsRuleError(f"A triplet needs a {name}.")
        if len(value) > max_length:
            raise ClaimsRuleError(f"The {name} may have at most {max_length} characters.")
        parts.append(value)
    return tuple(parts)


# --------------------------------------------------------------------------- HalluDetect


def _names(read, labels) -> str:
    names = [read.label_name(label).lower() for label in read.labels if label in labels]
    return ", ".join(names[:-1]) + " or " + names[-1] if len(names) > 1 else "".join(names) or "no"


def check_severity(read, label: str, severity, justification: str = "") -> tuple[int | None, str]:
    """Validated (severity, justification) for a sentence with this label.

    Only invented, misleading and speculative sentences take a severity; a
    severity of None clears it (and the justification must then be empty).
    """
    justification = (justification or "").strip()
    if len(justification) > MAX_JUSTIFICATION_LENGTH:
        raise ClaimsRuleError(f"A justification may have at most {MAX_JUSTIFICATION_LENGTH} characters.")
    if severity in (None, ""):
        return None, justification
    try:
        severity = int(severity)
    except (TypeError, ValueError):
        raise ClaimsRuleError("Severity is a number from 1 to 5.") from None
    if severity not in Severity.values:
        raise ClaimsRuleError("Severity is a number from 1 to 5.")
    if label not in read.severity_labels:
        raise ClaimsRuleError(f"Only {_names(read, read.severity_labels)} sentences take a severity; label it first.")
    return severity, justification


def effective_severity(read, label: str, severity: int | None) -> int | None:
    """The severity that counts: none unless the sentence's label (still) takes one."""
    return severity if label in read.severity_labels else None


def counts_as_hallucination(read, label: str, severity: int | None, threshold: int | None = None) -> bool:
    """Whether a sentence counts as a hallucination, keeping only severity >= threshold when one is given.

    With a threshold, a hallucination nobody rated is not kept (HalluDetect's
    filter keeps rated ones of severity >= 4): reports show how many were unrated.
    """
    if label not in read.hallucinated:
        return False
    if threshold is None:
        return True
    return severity is not None and severity >= threshold


@dataclass
class HalluTally:
    """HalluDetect's figures for a group of turns."""

    turns: int = 0
    sentences: int = 0
    hallucinations: int = 0
    unrated: int = 0  # hallucinations without a severity (dropped when a threshold is applied)
    words: int = 0
    hallucinated_words: int = 0
    severity_counts: Counter = field(default_factory=Counter)

    @property
    def per_turn(self) -> float | None:
        """HPT: hallucinated sentences per turn."""
        return self.hallucinations / self.turns if self.turns else None

    @property
    def token_accuracy(self) -> float | None:
        """Share of the words of the responses that are in sentences not counted as hallucinated."""
        return (self.words - self.hallucinated_words) / self.words if self.words else None

    @property
    def mean_severity(self) -> float | None:
        rated = sum(self.severity_counts.values())
        return sum(s * n for s, n in self.severity_counts.items()) / rated if rated else None


def tally_hallucinations(
    read,
    rows: Iterable[tuple[str, object, str, int | None, int]], threshold: int | None = None
) -> dict[str, HalluTally]:
    """Per group, from (group, turn id, sentence label, severity, word count) rows of labelled sentences."""
    tallies: dict[str, HalluTally] = {}
    seen_turns: set[tuple[str, object]] = set()
    for group, turn, label, severity, words in rows:
        tally = tallies.setdefault(group, HalluTally())
        if (group, turn) not in seen_turns:
            seen_turns.add((group, turn))
            tally.turns += 1
        tally.sentences += 1
        tally.words += words
        severity = effective_severity(read, label, severity)
        if label in read.hallucinated:
            if severity is None:
                tally.unrated += 1
            else:
                tally.severity_counts[severity] += 1
        if counts_as_hallucination(read, label, severity, threshold):
            tally.hallucinations += 1
            tally.hallucinated_words += words
    return dict(sorted(tallies.items()))


# The one word count of the studio (whitespace words; characters in Chinese and Japanese): languages.word_count.
word_count = languages.word_count


# --------------------------------------------------------------------------- Face4RAG


def check_error_type(read, label: str, error_type: str, allowed: Sequence[str]) -> str:
    """A validated error type ("" clears it) for a sentence with this label."""
    error_type = (error_type or "").strip()
    if not error_type:
        return ""
    if error_type not in allowed:
        raise ClaimsRuleError(f"{error_type!r} is not one of this project's error types.")
    if label not in read.error_type_labels:
        raise ClaimsRuleError(f"Only {_names(read, read.error_type_labels)} sentences take an error type; label it first.")
    return error_type


def error_type_distribution(
    read, rows: Iterable[tuple[str, str, str]], allowed: Sequence[str]
) -> dict[str, dict]:
    """Per group: counts and shares of error types, from (group, label, error type) rows.

    Only sentences whose label takes an error type count; those without an error type
    are counted as ``untyped``; a type no longer in the project's list is kept
    under its own name (after the configured ones) rather than dropped.
    """
    result: dict[str, dict] = {}
    for group, label, error_type in rows:
        if label not in read.error_type_labels:
            continue
        entry = result.setdefault(group, {"eligible": 0, "untyped": 0, "counts": Counter()})
        entry["eligible"] += 1
        if error_type:
            entry["counts"][error_type] += 1
        else:
            entry["untyped"] += 1
    for entry in result.values():
        typed = sum(entry["counts"].values())
        names = list(allowed) + sorted(set(entry["counts"]) - set(allowed))
        entry["typed"] = typed
        entry["rows"] = [
            {"error_type": name, "count": entry["counts"][name],
             "share": entry["counts"][name] / typed if typed else None}
            for name in names
        ]
    return dict(sorted(result.items()))


def stale_extras(read, label: str, severity: int | None, justification: str, error_type: str) -> dict:
    """Fields to clear when a sentence gets a final label that does not take them.

    A severity (and its justification) belongs to a label of the protocol's
    severity group, an error type to one of its error-type group. While
    the label is unfinished ("", mid-walk or after an undo) nothing is cleared,
    so going back one step and answering again keeps the rating.
    """
    if not label:
        return {}
    cleared = {}
    if label not in read.severity_labels and (severity is not None or justification):
        cleared.update(severity=None, justification="")
    if label not in read.error_type_labels and error_type:
        cleared["error_type"] = ""
    return cleared
