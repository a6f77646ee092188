"""Writes on a project's settings and its people: the one write path of the lead's console, the API and the admin."""

import secrets
from datetime import timedelta

from django.core.exceptions import PermissionDenied, ValidationError
from django.db import transaction
from django.db.models import F
from django.utils import timezone
from django.utils.text import slugify

from ..access import forget_roles, may_create_projects
from ..models import Membership, Project, ProjectInvite, UnitFlag
from ..domain.protocol_document import ProtocolDocumentError
from ..domain.vocabulary import Role
from ..work.assignment import assignment_release
from .protocol_services import protocol_set
from .selectors import RemovalEffects, invite_is_open, people_addable_by, removal_effects

# One answer for a name nobody may add, whether no account has it, it is inactive, or the lead cannot see it:
# otherwise a lead could tell the site's accounts apart by the answer (issue 22, item 10).
NOT_ADDABLE_MESSAGE = (
    "Nobody you can add by username is called {username!r}. By username you add people who already work on a "
    "project you lead; anyone else joins with an invite link."
)

SETTINGS_FIELDS = frozenset({
    "name", "guidelines", "overlap", "protocol_mode", "show_prelabels", "require_evidence",
    "qualification_pass_mark", "qualification_auto_retries", "enable_triplets", "enable_severity", "enable_error_types",
    "severity_threshold", "error_types", "adjudicators_may_annotate", "imported_gold",
    "adjudication_order",
    "drawn_turn_review", "default_language",
})


@transaction.atomic
def project_update_settings(project: Project, **changes) -> Project:
    unknown = set(changes) - SETTINGS_FIELDS
    if unknown:
        raise ValidationError({field: "This setting cannot be changed." for field in unknown})
    if "error_types" in changes:
        types = [t.strip() for t in changes["error_types"]]
        if any(not t for t in types):
            raise ValidationError({"error_types": "Error types cannot be blank."})
        if len(set(types)) != len(types):
            raise ValidationError({"error_types": "Error types must be distinct."})
        changes["error_types"] = types
    for field, value in changes.items():
        setattr(project, field, value)
    project.full_clean(exclude=["slug"])
    project.save(update_fields=sorted(changes) or None)
    return project


def _lead_count(project) -> int:
    return Membership.objects.filter(project=project, role=Role.LEAD).count()


@transaction.atomic
def membership_add(project: Project, username: str, role: str, *, actor) -> Membership:
    """Add someone ``actor`` may already see (``people_addable_by``) to the project."""
    user = people_addable_by(actor).filter(username=username).first()
    if user is None:
        raise ValidationError({"username": NOT_ADDABLE_MESSAGE.format(username=username)})
    if Membership.objects.filter(project=project, user=user).exists():
        raise ValidationError({"username": f"{username} is already a member; change their role instead."})
    forget_roles(project)
    return Membership.objects.create(project=project, user=user, role=role)


@transaction.atomic
def membership_set_role(membership: Membership, role: str) -> Membership:
    membership = Membership.objects.select_for_update().get(pk=membership.pk)
    if membership.role == Role.LEAD and role != Role.LEAD and _lead_count(membership.project) == 1:
        raise ValidationError({"role": "A project keeps at least one lead; make someone else lead first."})
    membership.role = role
    membership.save(update_fields=["role"])
    return membership


@transaction.atomic
def membership_remove(membership: Membership, *, actor) -> RemovalEffects:
    """Remove a member; their unsubmitted slots are released and their open flags closed, both in the audit.

    A released slot no longer counts in its turn's overlap (someone else takes it); what the member labelled
    there stays with the released assignment. Their submitted work stays as it is. Returns what was done,
    for the lead to read.
    """
    membership = Membership.objects.select_for_update().select_related("user", "project").get(pk=membership.pk)
    project = membership.project
    if membership.role == Role.LEAD and _lead_count(project) == 1:
        raise ValidationError({"non_field_errors": "A project keeps at least one lead; make someone else lead first."})
    effects = removal_effects(membership)
    username = membership.user.get_username()
    for slot in effects.slots:
        assignment_release(slot, actor=actor, reason=f"{username} was removed from the project")
    UnitFlag.objects.filter(pk__in=[flag.pk for flag in effects.flags], status=UnitFlag.Status.OPEN).update(
        status=UnitFlag.Status.DISMISSED, resolved_by=actor, resolved_at=timezone.now(),
        resolution=f"Closed: {username} was removed from the project. The unit is unchanged; a lead can still "
                   "split or merge it.",
    )
    membership.delete()
    forget_roles(project)
    return effects


# --- a new project, by people the site administrator allows to ------------------------------------------------

def _free_slug(wanted: str) -> str:
    """``wanted``, or ``wanted-2``, ``-3``... if another project has it (a project's address never changes)."""
    base = wanted[:44] or "project"
    slug, number = base, 1
    while Project.objects.filter(slug=slug).exists():
        number += 1
        slug = f"{base}-{number}"
    return slug


@transaction.atomic
@transaction.atomic
def project_create(*, creator, name: str, slug: str = "", protocol_document=None, **settings) -> Project:
    """A new project led by ``creator``, who must hold ``annotator.add_project`` (``may_create_projects``), with
    ``protocol_document`` as its first protocol version when given (a refused document creates nothing)."""
    if not may_create_projects(creator):
        raise PermissionDenied("Creating projects is for people the site administrator allows to.")
    name = (name or "").strip()
    if not name:
        raise ValidationError({"name": "Give the project a name."})
    unknown = set(settings) - SETTINGS_FIELDS
    if unknown:
        raise ValidationError({field: "This setting cannot be set here." for field in unknown})
    project = Project(name=name, slug=_free_slug(slugify(slug or name)), **settings)
    project.full_clean()
    project.save()
    Membership.objects.create(project=project, user=creator, role=Role.LEAD)
    if protocol_document is not None:
        try:
            protocol_set(project, protocol_document, user=creator, chosen=True)
        except ProtocolDocumentError as refused:
            raise ValidationError({"protocol_file": [f"{where} {message}" for where, message in refused.problems]}) from None
        project.refresh_from_db(fields=["protocol_version"])
    return project


# --- invite links -------------------------------------------------------------------------------------------------

# A link lets in annotators and adjudicators; a lead is made from a member (set role), by a lead who knows them.
INVITE_ROLES = (Role.ANNOTATOR, Role.ADJUDICATOR)
INVITE_DAYS = 14


def invite_create(project: Project, *, role: str, actor, days: int = INVITE_DAYS) -> ProjectInvite:
    if role not in INVITE_ROLES:
        raise ValidationError({"role": "An invite link makes annotators or adjudicators; make a lead from a member."})
    return ProjectInvite.objects.create(
        project=project, role=role, created_by=actor, token=secrets.token_urlsafe(32),
        expires_at=timezone.now() + timedelta(days=days),
    )


def invite_revoke(invite: ProjectInvite) -> ProjectInvite:
    ProjectInvite.objects.filter(pk=invite.pk, revoked_at__isnull=True).update(revoked_at=timezone.now())
    invite.refresh_from_db()
    return invite


@transaction.atomic
def invite_accept(invite: ProjectInvite, user) -> tuple[Membership, bool]:
    """``user`` joins the invite's project with its role; returns the membership and whether it is new.

    Someone already in the project keeps their role (a link never changes a member's role).
    """
    invite = ProjectInvite.objects.select_for_update().select_related("project").get(pk=invite.pk)
    if not invite_is_open(invite):
        raise ValidationError("This invite link has expired or was revoked: ask the project's lead for a new one.")
    existing = Membership.objects.filter(project=invite.project, user=user).first()
    if existing is not None:
        return existing, False
    membership = Membership.objects.create(project=invite.project, user=user, role=invite.role)
    ProjectInvite.objects.filter(pk=invite.pk).update(uses=F("uses") + 1)
    forget_roles(invite.project)
    return membership, True
