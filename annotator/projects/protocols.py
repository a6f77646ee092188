"""The protocol a project annotates with: its current stored version, or CogniBench's by default.

``protocol_for(project)`` is what every screen, write route, report and job reads. A stored version is never
edited (a change is a new version row), so each version's document is checked and loaded once per process,
keyed by its row id: after the first call for a version, ``protocol_for`` costs a dict lookup and no query.
"""

from __future__ import annotations

from ..domain.protocol_document import COGNIBENCH, Protocol, load_protocol

_loaded: dict[int, Protocol] = {}


def protocol_for(project) -> Protocol:
    """The project's current protocol (CogniBench's when the project has never set one)."""
    version_id = getattr(project, "protocol_version_id", None)
    if version_id is None:
        return COGNIBENCH
    if version_id not in _loaded:
        _loaded[version_id] = load_protocol(project.protocol_version.document)
    return _loaded[version_id]


def protocol_of_version(version) -> Protocol:
    """The protocol of one stored version (a ``ProtocolVersion`` row; None: CogniBench's built-in)."""
    if version is None:
        return COGNIBENCH
    if version.pk not in _loaded:
        _loaded[version.pk] = load_protocol(version.document)
    return _loaded[version.pk]
