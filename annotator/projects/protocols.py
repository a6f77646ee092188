"""The protocol a project annotates with: its current stored version, or CogniBench's by default.

``protocol_for(project)`` is what every screen, write route, report and job reads. A stored version is never
edited (a change is a new version row), so each version's document is checked and loaded once per process,
keyed by its row id: after the first call for a version, ``protocol_for`` costs a dict lookup and no query.
"""

from __future__ import annotations

from ..domain.protocol.cache import ProtocolCache
from ..domain.protocol.document import COGNIBENCH, Protocol, load_protocol, read_checksum
from ..domain.storable import readable_data, surrogate_problem, unstorable_path
from ..domain.vocabulary import ProtocolMode

# Row ids are never reused by PostgreSQL's sequences nor by Django's AUTOINCREMENT on SQLite; tests, whose
# rolled-back transactions do reuse them, clear this (tests/conftest.py). Where the row is at hand, its
# checksum is compared anyway. Bounded (least recently used out): every version a process saw used to stay.
_loaded: ProtocolCache[Protocol] = ProtocolCache()


def protocol_for(project) -> Protocol:
    """The project's current protocol (CogniBench's when the project has never set one)."""
    version_id = getattr(project, "protocol_version_id", None)
    if version_id is None:
        return COGNIBENCH
    known = _loaded.get(version_id)
    if known is not None and not _stale(project, known):
        return known
    return protocol_of_version(project.protocol_version)


def protocol_of_version(version) -> Protocol:
    """The protocol of one stored version (a ``ProtocolVersion`` row; None: CogniBench's built-in)."""
    if version is None:
        return COGNIBENCH
    known = _loaded.get(version.pk)
    if known is None or known.checksum != read_checksum(version.checksum):
        document = version.document
        if unstorable_path(document, surrogate_problem) is not None:
            # Stored (on SQLite) before lone surrogates were refused: read with U+FFFD, as the pages show it, so
            # that the project's pages work and a clean document can be set again.
            document = readable_data(document)
        known = _loaded.put(version.pk, load_protocol(document))
    return known


def _stale(project, known: Protocol) -> bool:
    row = project._state.fields_cache.get("protocol_version")
    return row is not None and read_checksum(row.checksum) != known.checksum


def forget_loaded_protocols() -> None:
    """Drop the per-process cache (tests whose rolled-back rows reuse ids)."""
    _loaded.clear()


def protocol_for_assignment(assignment) -> Protocol:
    """The protocol a slot is annotated with: the version it was stamped with, else the project's current one."""
    if assignment.protocol_version_id is not None:
        return protocol_of_version(assignment.protocol_version)
    return protocol_for(assignment.project)


def protocol_caption(project) -> str:
    """One line naming the version a project's figures cover, for the report pages."""
    protocol = protocol_for(project)
    if project.protocol_version_id is None:
        return f"{protocol.name} protocol v{protocol.version} (built-in)"
    version = project.protocol_version
    text = (f"{protocol.name} protocol v{protocol.version} (project version {version.number}, "
            f"since {version.created_at:%Y-%m-%d %H:%M} UTC)")
    if version.previous_id is not None and version.label_mapping:
        previous = protocol_of_version(version.previous)
        text += (f"; work begun before then follows {previous.name} v{previous.version} (project version "
                 f"{version.previous.number}); gold, agreement and the gold figures of the reports page count its "
                 "labels as the mapping carries them over")
    return text


def version_caption(project, version, whose: str) -> str:
    """One line naming the stored ``version`` (None: the built-in protocol) a page's figures are in, when that is
    not necessarily the project's current one (a job's figures are in the version it labelled with); ``whose``
    says why, e.g. "the version job #4 labelled with"."""
    protocol = protocol_of_version(version)
    if version is None:
        text = f"{protocol.name} protocol v{protocol.version} (built-in, {whose})"
    else:
        text = f"{protocol.name} protocol v{protocol.version} (project version {version.number}, {whose})"
    current = project.protocol_version_id
    if current != (version.pk if version is not None else None):
        now = protocol_for(project)
        number = f"project version {project.protocol_version.number}" if current is not None else "built-in"
        text += f"; the project now follows {now.name} v{now.version} ({number}), whose figures these are not"
    return text


def protocol_mode_name(project) -> str:
    """How the project's annotators walk its protocol, with the protocol's number of labels where it helps."""
    if project.protocol_mode == ProtocolMode.INDEPENDENT:
        return f"Independent: pick one of {len(protocol_for(project).labels)} labels at once"
    return ProtocolMode.SEQUENTIAL.label
