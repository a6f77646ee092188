"""The protocol a project annotates with: its current stored version, or CogniBench's by default.

``protocol_for(project)`` is what every screen, write route, report and job reads; it never queries the
database when the project row is at hand (the current version's document is loaded once per process and
version, since a stored version is never edited: a change is a new version).
"""

from __future__ import annotations

from ..domain.protocol_document import COGNIBENCH, Protocol, load_protocol

_loaded: dict[tuple[int, str], Protocol] = {}


def protocol_for(project) -> Protocol:
    """The project's current protocol (CogniBench's when the project has never set one)."""
    version_id = getattr(project, "protocol_version_id", None)
    if version_id is None:
        return COGNIBENCH
    return protocol_of_version(project.protocol_version)


def protocol_of_version(version) -> Protocol:
    """The protocol of one stored version (a ``ProtocolVersion`` row), loaded once per process."""
    key = (version.pk, version.checksum)
    if key not in _loaded:
        _loaded[key] = load_protocol(version.document)
    return _loaded[key]
