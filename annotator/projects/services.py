"""Writes on a project's settings and its people (called by the API; the admin edits the same rows)."""

from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.db import transaction

from ..access import forget_roles
from ..models import Membership, Project
from ..domain.vocabulary import Role

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
def membership_add(project: Project, username: str, role: str) -> Membership:
    user = get_user_model().objects.filter(username=username, is_active=True).first()
    if user is None:
        raise ValidationError({"username": f"No active user named {username!r}."})
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
def membership_remove(membership: Membership) -> None:
    membership = Membership.objects.select_for_update().get(pk=membership.pk)
    if membership.role == Role.LEAD and _lead_count(membership.project) == 1:
        raise ValidationError({"non_field_errors": "A project keeps at least one lead; make someone else lead first."})
    membership.delete()
