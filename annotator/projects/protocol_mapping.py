"""How labels given under a project's earlier protocol versions count under its current one.

A frozen project's new version says, for each label of the version before it, the label it carries over to, or
null where the meaning does not carry over (``ProtocolVersion.label_mapping``). Mappings compose along the chain
of versions, so a label of version 1 counts under version 3 as version 2's mapping of version 1's mapping of it.
Gold, agreement and the reports compare labels as the current version carries them: an annotation of an older
version counts with its carried label (and that label's path, for agreement per step), and one whose label does
not carry over is left out, and counted as left out, so the page can say so.

An annotation records its version through its slot (``Assignment.protocol_version``; none: the current one). Gold
records none, but every change of its label is in GoldEvent, and every way of deciding gold uses the version
current at that moment: a gold label belongs to the version that was current when the label last changed (an
event whose old and new labels differ; a new reason alone keeps the label). Gold with no such event falls back
on the labels: the current version's when it has that label, else the newest older version's that has it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from ..domain.protocol.document import Protocol
from .protocols import protocol_for, protocol_of_version


@dataclass(frozen=True)
class VersionCarry:
    """The current protocol, and for each older version of the project the current label of each of its labels."""

    current: Protocol
    current_version_id: int | None = None
    current_number: int | None = None
    # older version id -> {its label: the current label it carries over to, or None}
    carried: Mapping[int, Mapping[str, str | None]] = field(default_factory=dict)
    numbers: Mapping[int, int] = field(default_factory=dict)  # older version id -> its number in the project
    # (version id, created at) from the newest version back to the oldest (the current one first, unless the carry
    # is as of an older version: version_carry's ``as_of``)
    since: tuple = ()

    @property
    def has_older(self) -> bool:
        return bool(self.carried)

    def is_older(self, version_id: int | None) -> bool:
        return version_id is not None and version_id in self.carried

    def carry(self, version_id: int | None, label: str) -> str | None:
        """The current label an annotation of ``version_id`` (None: the current version) counts as."""
        if not self.is_older(version_id):
            return label
        return self.carried[version_id].get(label)

    def version_at(self, moment) -> int | None:
        """The version current at ``moment`` (None: the current one; before every version: the oldest)."""
        for version_id, created_at in self.since:
            if moment >= created_at:
                return None if version_id == self.current_version_id else version_id
        return self.since[-1][0] if self.since and self.since[-1][0] != self.current_version_id else None

    def carry_gold(self, label: str, changed_at=None) -> str | None:
        """The current label a gold label counts as, its label last changed at ``changed_at`` (None: unknown;
        see the module's docstring)."""
        if changed_at is not None and self.since:
            return self.carry(self.version_at(changed_at), label) if label else label
        if not label or label in self.current.labels:
            return label
        for version_id in sorted(self.carried, key=self.numbers.__getitem__, reverse=True):
            if label in self.carried[version_id]:
                return self.carried[version_id][label]
        return None

    def gold_version(self, label: str, changed_at=None) -> int | None:
        """The version a gold label was decided under (None: the current one), as ``carry_gold`` reads it."""
        if changed_at is not None and self.since:
            return self.version_at(changed_at)
        if not label or label in self.current.labels:
            return None
        for version_id in sorted(self.carried, key=self.numbers.__getitem__, reverse=True):
            if label in self.carried[version_id]:
                return version_id
        return None

    def left_out_labels(self, version_id: int) -> list[str]:
        """The labels of an older version that do not carry over to the current one."""
        return [label for label, carried in self.carried[version_id].items() if carried is None]

    def describe_version(self, version_id: int | None) -> str:
        number = self.numbers.get(version_id) if self.is_older(version_id) else self.current_number
        return f"version {number}" if number is not None else "the built-in version"


def version_carry(project, as_of: int | None = None) -> VersionCarry:
    """The project's older versions and how each of their labels counts under its current version.

    ``as_of`` (a version id of the project) counts under that version instead: its older versions carry over
    through the mappings up to it, and labels of the versions after it count as nothing (a mapping says how an
    old label reads in a newer version, never the reverse). The faithfulness report reads gold so, under the
    version the job labelled with."""
    from ..models import ProtocolVersion

    current = protocol_for(project)
    if project.protocol_version_id is None:
        return VersionCarry(current)
    rows = {row.pk: row for row in ProtocolVersion.objects.filter(project=project).only(
        "id", "number", "previous_id", "label_mapping", "created_at")}
    anchor = as_of if as_of in rows else project.protocol_version_id
    if anchor != project.protocol_version_id:
        current = protocol_of_version(ProtocolVersion.objects.get(pk=anchor))
    version = rows[anchor]
    to_current: dict[str, str | None] = {label: label for label in current.labels}
    carried, numbers = {}, {}
    while version.previous_id in rows and version.previous_id not in carried:
        older = rows[version.previous_id]
        mapping = version.label_mapping or {}
        to_current = {old: (to_current.get(new) if new is not None else None) for old, new in mapping.items()}
        carried[older.pk], numbers[older.pk] = to_current, older.number
        version = older
    newer = sorted((pk for pk, row in rows.items() if row.number > rows[anchor].number),
                   key=lambda pk: rows[pk].number, reverse=True)
    for pk in newer:
        carried[pk], numbers[pk] = {}, rows[pk].number
    since = tuple((pk, rows[pk].created_at) for pk in [*newer, anchor, *(pk for pk in carried if pk not in newer)])
    return VersionCarry(current, anchor, rows[anchor].number, carried, numbers, since)


def carry_for_slots(project, assignments) -> VersionCarry | None:
    """The project's ``VersionCarry`` when one of ``assignments`` was made under an older version; None (and no
    query) when all follow the current one, as they do in a project that never changed its protocol."""
    if all(a.protocol_version_id in (None, project.protocol_version_id) for a in assignments):
        return None
    return version_carry(project)


def carried_note(carry: VersionCarry | None, assignments) -> str:
    """What gold's reason adds when some of the answers it rests on were carried over from an older version."""
    if carry is None:
        return ""
    older = sorted({carry.describe_version(a.protocol_version_id) for a in assignments
                    if carry.is_older(a.protocol_version_id)})
    return (f"; answers given under protocol {', '.join(older)} counted as the mapping to "
            f"{carry.describe_version(None)} carries them over")


# --- the label mapping as the protocol page asks for it: one select per label of the current version -------------

NOT_CARRIED = "null"  # the select's value for "the meaning does not carry over" (JSON's null in the mapping)
MAPPING_FIELD = "map:"  # a select's name: this prefix and the current version's label id


@dataclass(frozen=True)
class MappingRow:
    old: str  # a label of the current version
    old_name: str
    choices: tuple[tuple[str, str], ...]  # (value, shown): every label of the new version, then NOT_CARRIED
    chosen: str  # the label of the same id in the new version, else "" (the lead chooses)


def mapping_rows(old: Protocol, new: Protocol) -> list[MappingRow]:
    """A row per label of ``old``: what it may carry over to in ``new``, pre-filled with the label of the same id."""
    choices = tuple((label, f"{new.label_name(label)} ({label})") for label in new.labels) + (
        (NOT_CARRIED, "(does not carry over)"),)
    return [MappingRow(label, old.label_name(label), choices, label if label in new.labels else "") for label in old.labels]


def mapping_from_fields(data: Mapping[str, str]) -> dict | None:
    """The mapping the selects give (``{old: new or None}``, an unchosen label left out so that it is named as
    missing), or None when the form has no select."""
    chosen = {key[len(MAPPING_FIELD):]: value for key, value in data.items() if key.startswith(MAPPING_FIELD)}
    if not chosen:
        return None
    return {old: None if value == NOT_CARRIED else value for old, value in chosen.items() if value}
