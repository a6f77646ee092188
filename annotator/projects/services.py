"""Writes on a project's settings and its people: the one write path of the lead's console, the API and the admin."""

import secrets
from datetime import timedelta

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.password_validation import validate_password
from django.core.exceptions import PermissionDenied, ValidationError
from django.db import connection, transaction
from django.db.models import F
from django.utils import timezone
from django.utils.text import slugify

from ..access import forget_roles, may_create_projects
from ..models import Membership, MembershipRemoval, Project, ProjectInvite, UnitFlag
from ..domain.protocol.document import ProtocolDocumentError
from ..domain.vocabulary import Role
from ..work.assignment import assignment_release
from .protocol_services import protocol_set
from .selectors import (INVITE_CLOSED, SINGLE_USE_PREFIX, RemovalEffects, invite_is_open, open_invites,
                        people_addable_by, removal_effects, removed_since)
from .usernames import username_refusal

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
    # Kept so that an invite link made before now does not let them straight back in (invite_accept).
    MembershipRemoval.objects.create(project=project, user_id=membership.user_id, removed_at=timezone.now(),
                                     removed_by=actor if getattr(actor, "pk", None) else None)
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


INVITE_MADE_BEFORE_REMOVAL = (
    "This invite link was made before you were removed from the project, so it no longer lets you in: ask the "
    "project's lead for a new link."
)


def invite_create(project: Project, *, role: str, actor, days: int = INVITE_DAYS,
                  single_use: bool = False) -> tuple[ProjectInvite, bool]:
    """An open link of this role until ``days`` from today; returns it and whether it is new.

    A lead who asks twice for the same link (same role, same last day) gets the open one back rather than a
    second, identical link to keep track of and revoke. A ``single_use`` link is for one person: always a new
    one, and it closes once someone joins with it.
    """
    if role not in INVITE_ROLES:
        raise ValidationError({"role": "An invite link makes annotators or adjudicators; make a lead from a member."})
    expires_at = timezone.now() + timedelta(days=days)
    with transaction.atomic():
        Project.objects.select_for_update().filter(pk=project.pk).first()  # two clicks at once: one link
        if not single_use:
            same = (open_invites(project).filter(role=role, expires_at__date=expires_at.date())
                    .exclude(token__startswith=SINGLE_USE_PREFIX).order_by("-created_at"))
            existing = same.first()
            if existing is not None:
                return existing, False
        token = (SINGLE_USE_PREFIX if single_use else "") + secrets.token_urlsafe(32)
        invite = ProjectInvite.objects.create(
            project=project, role=role, created_by=actor, token=token, expires_at=expires_at,
        )
    return invite, True


def invite_revoke(invite: ProjectInvite) -> ProjectInvite:
    ProjectInvite.objects.filter(pk=invite.pk, revoked_at__isnull=True).update(revoked_at=timezone.now())
    invite.refresh_from_db()
    return invite


@transaction.atomic
def invite_accept(invite: ProjectInvite, user) -> tuple[Membership, bool]:
    """``user`` joins the invite's project with its role; returns the membership and whether it is new.

    Someone already in the project keeps their role (a link never changes a member's role). Someone removed
    from the project after the link was made is refused: the lead removed them knowing of that link.
    """
    invite = ProjectInvite.objects.select_for_update().select_related("project").get(pk=invite.pk)
    if not invite_is_open(invite):
        raise ValidationError(INVITE_CLOSED)
    existing = Membership.objects.filter(project=invite.project, user=user).first()
    if existing is not None:
        return existing, False
    if removed_since(invite, user):
        raise ValidationError(INVITE_MADE_BEFORE_REMOVAL)
    membership = Membership.objects.create(project=invite.project, user=user, role=invite.role)
    ProjectInvite.objects.filter(pk=invite.pk).update(uses=F("uses") + 1)
    forget_roles(invite.project)
    return membership, True


# The key of PostgreSQL's transaction lock that puts sign-ups one after the other ("signup" in ASCII).
ACCOUNT_CREATION_LOCK = 0x7369676E7570


def account_creation_lock() -> None:
    """Wait for any other sign-up's transaction to end (PostgreSQL; SQLite's IMMEDIATE transactions already do)."""
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_xact_lock(%s)", [ACCOUNT_CREATION_LOCK])


@transaction.atomic
def account_create_with_invite(invite: ProjectInvite, *, username: str, password: str) -> tuple[object, Membership]:
    """A new account that joins the invite's project with its role, in one step (the invite page's sign-up).

    Refused while the site has self sign-up off (``INVITE_SIGNUP``), for a link no longer open, a username that
    mixes scripts or is a twin of one taken (case aside, and lookalike letters: usernames.py), or a password
    Django's validators refuse.
    """
    if not settings.INVITE_SIGNUP:
        raise PermissionDenied("This site does not let people create their own accounts.")
    invite = ProjectInvite.objects.select_for_update().get(pk=invite.pk)
    if not invite_is_open(invite):
        raise ValidationError(INVITE_CLOSED)
    users = get_user_model()
    username = users.normalize_username((username or "").strip())
    if not username:
        raise ValidationError({"username": "Choose a username."})
    # Every sign-up one after the other from here (SQLite's transactions are already), so that two at once
    # cannot make twins that neither saw.
    account_creation_lock()
    refusal = username_refusal(username, users.objects.values_list("username", flat=True).iterator())
    if refusal:
        raise ValidationError({"username": refusal})
    user = users(username=username)
    try:
        validate_password(password, user)
    except ValidationError as error:
        raise ValidationError({"password": error.messages}) from None
    user.set_password(password)
    user.full_clean(exclude=["password"])
    user.save()
    membership, _ = invite_accept(invite, user)
    return user, membership
