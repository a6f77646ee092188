"""Agreement over work done under several protocol versions: old labels counted as the mapping carries them over.

``annotator.projects.protocol_mapping`` says which current label each older version's label counts as (or none).
Here that becomes SQL for the agreement's one GROUP BY (an annotation's label code depends on its slot's version;
gold's on which version has its label) and the note the reports page shows: per older version, how many submitted
annotations were counted through the mapping and how many were left out because their label does not carry over.
A project that never changed its protocol gets none of this: the statement stays the one it always was.
"""

from __future__ import annotations

import datetime
import re

from django.db import connection
from django.db.models import Count

from ..models import Assignment, GoldEvent, SentenceAnnotation

_LABEL_ID = re.compile(r"^[a-z][a-z0-9_]{0,39}\Z")


def _literal(label: str) -> str:
    """A label as an SQL literal; a protocol's label ids are identifiers (its validation says so): checked again
    here, since they are written into the statement."""
    if not _LABEL_ID.match(label):
        raise ValueError(f"a protocol's label must be an identifier, not {label!r}")
    return f"'{label}'"


def _case(column: str, codes: dict[str, int | str]) -> str:
    if not codes:
        return "NULL"
    return f"(CASE {column} {' '.join(f'WHEN {_literal(label)} THEN {code}' for label, code in codes.items())} END)"


def carried_label_code(column: str, version_column: str, labels, carry) -> str:
    """The index in ``labels`` (the current version's) of an annotation's label as its version carries it over,
    NULL where it does not; ``version_column`` is the annotation's slot's protocol version."""
    index = {label: i for i, label in enumerate(labels)}
    current = _case(column, index)
    branches = " ".join(
        f"WHEN {version_column} = {int(version_id)} THEN "
        f"{_case(column, {old: index[new] for old, new in mapping.items() if new is not None})}"
        for version_id, mapping in carry.carried.items())
    return f"(CASE {branches} ELSE {current} END)"


def carried_gold_code(column: str, labels, carry, as_label: bool = False) -> str:
    """The index in ``labels`` (``as_label``: the label itself) of a gold label as the current version counts it,
    NULL where it does not carry over. Its version is the one current when the label last changed (GoldEvent;
    ``VersionCarry.carry_gold``): one CASE per version, chosen by that moment."""
    index = {label: i for i, label in enumerate(labels)}
    value = _literal if as_label else index.__getitem__

    def case(carried) -> str:
        codes = {label: value(new) for label, new in carried.items() if new is not None}
        return _case(column, codes) if codes else "NULL"

    q = connection.ops.quote_name
    gold_table = column.split(".")[0]
    changed = (f"(SELECT MAX(e.created_at) FROM {q(GoldEvent._meta.db_table)} e "
               f"WHERE e.sentence_id = {gold_table}.sentence_id AND e.old_label <> e.new_label)")
    older = {label for mapping in carry.carried.values() for label in mapping}
    by_labels = case({label: carry.carry_gold(label) for label in [*labels, *sorted(older - set(labels))]})
    current = case({label: label for label in labels})
    eras = " ".join(f"WHEN {changed} >= {_moment(created_at)} THEN "
                    f"{current if version_id == carry.current_version_id else case(carry.carried[version_id])}"
                    for version_id, created_at in carry.since)
    oldest = carry.since[-1][0]
    return (f"(CASE WHEN {changed} IS NULL THEN {by_labels} {eras} "
            f"ELSE {current if oldest == carry.current_version_id else case(carry.carried[oldest])} END)")


def _moment(value) -> str:
    """A version's creation time as an SQL literal (a datetime the database gave: no text from a user)."""
    if connection.vendor == "postgresql":
        return f"'{value.astimezone(datetime.timezone.utc).isoformat(sep=' ')}'::timestamptz"
    return f"'{connection.ops.adapt_datetimefield_value(value)}'"


def older_versions_note(project, carry) -> list[dict]:
    """Per older version with submitted work: its number, the annotations counted through the mapping, and those
    left out (their label does not carry over), with the labels that were left out."""
    if not carry.has_older:
        return []
    rows = (SentenceAnnotation.objects
            .filter(assignment__project=project, assignment__status=Assignment.Status.SUBMITTED,
                    assignment__is_qualification=False, assignment__protocol_version_id__in=list(carry.carried))
            .exclude(label="")
            .values_list("assignment__protocol_version_id", "label").annotate(n=Count("id")))
    found: dict[int, dict] = {}
    for version_id, label, count in rows:
        entry = found.setdefault(version_id, {"version": carry.numbers[version_id], "counted": 0, "left_out": 0,
                                              "left_out_labels": []})
        if carry.carry(version_id, label) is None:
            entry["left_out"] += count
            entry["left_out_labels"].append(label)
        else:
            entry["counted"] += count
    for entry in found.values():
        entry["left_out_labels"].sort()
    return sorted(found.values(), key=lambda entry: entry["version"])
