"""Setting a project's protocol: a new version, checked whole, saved whole or not at all.

A project's first protocol (or any change before anything is labelled) becomes its current version. Once
the project has annotations or gold, the current version is frozen: those records stay as they were chosen,
under the version they were made with (every slot without a version is stamped with the outgoing one), and
the new version needs a mapping of each old label to the new label it carries over to, or to null where the
meaning does not carry over. A path carries over as the new label's path.

Before anything is labelled, the slots without a version follow the new document at once: their version moves
on, so a page opened before the change (walking the outgoing document) is refused (409) and reloads, instead of
having its walk read under the new document (a label the annotator did not choose). Every route that changes a
protocol (the page, the API, ``protocol_set``, a JSONL file's header) comes here.
"""

from __future__ import annotations

from django.db import transaction
from django.db.models import F

from ..domain.protocol.document import COGNIBENCH, Protocol, ProtocolDocumentError
from ..domain.protocol.validation import bounded, pointer
from ..domain.storable import unstorable_path
from ..models import Assignment, Project, ProtocolVersion
from .protocol_reading import ProtocolTextError, check_protocol_bounds, load_protocol_bounded
from .protocols import protocol_for
from .selectors import project_has_annotations


def mapping_problems(old: Protocol, new: Protocol, mapping) -> list[tuple[str, str]]:
    """Every problem of a label mapping from ``old`` to ``new`` (paths under /label_mapping)."""
    if not isinstance(mapping, dict):
        return [("/label_mapping", "the project has annotations: give a label mapping, an object "
                                   "{old label: new label or null}, covering every label of the current version")]
    found = []
    for label in old.labels:
        if label not in mapping:
            found.append((f"/label_mapping/{label}", f"label {label!r} of the current version needs a mapping "
                                                     "(a label of the new version, or null where the meaning does not carry over)"))
        elif mapping[label] is not None and mapping[label] not in new.labels:
            found.append((f"/label_mapping/{label}", f"{mapping[label]!r} is not a label of the new version"))
    for label in mapping:
        if label not in old.labels:
            found.append((f"/label_mapping/{label}", f"{label!r} is not a label of the current version"))
    return bounded(found)


def protocol_set(project: Project, document, *, user=None, label_mapping=None,
                 chosen: bool = False) -> ProtocolVersion | None:
    """Make ``document`` the project's protocol. Returns the new version (None when it equals the current
    protocol: nothing changes). Raises ProtocolDocumentError naming every problem; nothing is saved then.

    ``chosen``: a lead chose it (the Protocol page, a new project's form). On a project still on the built-in
    default, choosing that same document gives the project its first version (the guide's "Choose the protocol"
    is done on a choice, not on a default) and changes nothing else: the walk is the same."""
    new = load_protocol_bounded(document)  # within PROTOCOL_MAX_CHARS / _DEPTH, whichever route it came by
    if label_mapping is not None:
        try:
            check_protocol_bounds(label_mapping)
        except ProtocolTextError as refused:
            raise ProtocolDocumentError([("/label_mapping", f"the label mapping {refused.reason}")]) from None
        if (unstorable := unstorable_path(label_mapping)) is not None:  # a NUL or a lone surrogate, as in a document
            where, problem = unstorable
            raise ProtocolDocumentError([(pointer("label_mapping", *where), problem)])
    with transaction.atomic():
        project = Project.objects.select_for_update(of=("self",)).select_related("protocol_version").get(pk=project.pk)
        current = project.protocol_version
        old = protocol_for(project)
        if new == old:
            if current is not None or not chosen:
                return None
            version = _new_version(project, new, None, {}, user)
            project.protocol_version = version
            project.save(update_fields=["protocol_version"])
            return version
        # The slots that follow the project's current protocol (no version of their own), locked before the
        # annotations are counted: a save in flight commits first and is counted, a later one waits and then
        # finds the version it carries moved on.
        following = Assignment.objects.filter(project=project, protocol_version__isnull=True)
        list(following.select_for_update().values_list("pk", flat=True))
        frozen = project_has_annotations(project)
        if frozen:
            problems = mapping_problems(old, new, label_mapping)
            if problems:
                raise ProtocolDocumentError(problems)
            if current is None:  # the built-in protocol the records were made with gets a row of its own
                current = _new_version(project, COGNIBENCH, None, {}, user)
            following.update(protocol_version=current)
        else:
            # Their pages walk the outgoing document: the next save of such a page carries a version that is
            # no longer the slot's, a 409, and the page reloads onto the new document (as after a split).
            following.update(version=F("version") + 1)
        version = _new_version(project, new, current, dict(label_mapping or {}) if frozen else {}, user)
        project.protocol_version = version
        project.save(update_fields=["protocol_version"])
    return version


def _new_version(project, protocol: Protocol, previous, mapping, user) -> ProtocolVersion:
    last = ProtocolVersion.objects.filter(project=project).order_by("-number").values_list("number", flat=True).first()
    return ProtocolVersion.objects.create(
        project=project, number=(last or 0) + 1, document=protocol.document, checksum=protocol.checksum,
        previous=previous, label_mapping=mapping, created_by=user,
    )


def carried_label(version: ProtocolVersion, old_label: str) -> str | None:
    """The label of ``version`` an annotation of the previous version carries over to (None: it does not)."""
    return version.label_mapping.get(old_label)
