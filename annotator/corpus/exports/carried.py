"""Every label of an export in the header's protocol version: the project's current one.

The JSONL header carries the project's current protocol document, so a label given under an older version is
written as that version's mapping carries it over (``annotator.projects.protocol_mapping``), with every answer of
its path that the current version's walk of that label still takes (``domain.gold_paths.carried_walk``), and says
what it was given as: ``"given_under": {"version": 1, "label": ..., "path": ...}``. A label that does not carry
over (mapped to null) is written with ``"label": null`` and ``"path": null`` and the same ``given_under``: the
record stays in the file, and a re-import keeps it as a note, never as a label (docs/jsonl-format.md). A project that never changed its protocol reads nothing more and writes what it wrote.
"""

from __future__ import annotations

import json

from django.db.models import F, Max

from annotator.domain.gold_paths import carried_walk
from annotator.models import GoldEvent
from annotator.projects.protocol_mapping import version_carry


class ExportCarry:
    """The project's ``VersionCarry`` put to the export's records."""

    def __init__(self, project):
        self.carry = version_carry(project)
        self.active = self.carry.has_older
        self.protocol = self.carry.current

    def _carried_path(self, label: str | None, given_path) -> dict | None:
        """The carried label's path: every answer of the given path that the current version still takes on the
        way to that label, completed by that walk's choice answers (``domain.gold_paths.carried_walk``: the given
        path itself when the current tree reads it as that label; ``{}`` when the label's walks share nothing)."""
        if label is None:
            return None
        return carried_walk(self.protocol, label, given_path)

    def given_under(self, version_id, label, path) -> dict:
        return {"version": self.carry.numbers[version_id], "label": label, "path": path}

    def record(self, record: dict, version_id) -> dict:
        """An annotation or adjudication given under ``version_id`` (None: the current version), in the
        current version's labels."""
        if not self.carry.is_older(version_id) or not record.get("label"):
            return record
        label = self.carry.carry(version_id, record["label"])
        out = dict(record)
        out["label"], out["path"] = label, self._carried_path(label, record.get("path"))
        out["given_under"] = self.given_under(version_id, record["label"], record.get("path"))
        return out

    def adjudication_version(self, resolved_at):
        """The version current when an adjudication was resolved (its label is that version's)."""
        return self.carry.version_at(resolved_at) if resolved_at is not None else None

    def gold_changes(self, sentence_ids) -> dict:
        """When each sentence's gold label last changed (GoldEvent; a new reason alone keeps the label)."""
        return dict(GoldEvent.objects.filter(sentence_id__in=sentence_ids).exclude(old_label=F("new_label"))
                    .values("sentence_id").annotate(changed=Max("created_at")).values_list("sentence_id", "changed"))

    def gold(self, label: str, path_text: str | None, changed_at):
        """A gold label (and its path, as JSON text) in the current version, and its ``given_under`` (None when
        it was decided under the current version)."""
        version_id = self.carry.gold_version(label, changed_at)
        if not self.carry.is_older(version_id):
            return label, path_text, None
        given_path = json.loads(path_text) if path_text is not None else None
        carried = self.carry.carry(version_id, label)
        path = self._carried_path(carried, given_path)
        given = self.given_under(version_id, label, self.protocol.ordered(given_path))
        return carried, (json.dumps(path) if path is not None else None), given
