"""Who may create projects: the permission ``annotator.add_project`` (the admin lists it as "Annotation |
project | Can add project"), granted and revoked on a page of its own by site administrators, who would
otherwise look for it among the admin's hundred-odd permissions."""

from dataclasses import dataclass

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Permission
from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import Q

ADMIN_LABEL = "Annotation | project | Can add project"


def may_manage_creators(user) -> bool:
    """Site administrators: staff who may change accounts (superusers may everything)."""
    return user.is_authenticated and user.is_active and user.is_staff and user.has_perm("auth.change_user")


def _permission() -> Permission:
    return Permission.objects.get(content_type__app_label="annotator", codename="add_project")


@dataclass
class Creator:
    user: object
    direct: bool  # granted to the account itself: revocable here
    groups: list  # names of their groups that hold it (revoked in the admin, for the whole group)
    superuser: bool


def project_creators() -> list[Creator]:
    """Every active account that may create projects, and why."""
    permission = _permission()
    users = get_user_model().objects.filter(is_active=True).filter(
        Q(is_superuser=True) | Q(user_permissions=permission) | Q(groups__permissions=permission)
    ).distinct().order_by("username").prefetch_related("groups__permissions", "user_permissions")
    creators = []
    for user in users:
        creators.append(Creator(
            user=user, superuser=user.is_superuser,
            direct=any(held.pk == permission.pk for held in user.user_permissions.all()),
            groups=sorted(group.name for group in user.groups.all()
                          if any(held.pk == permission.pk for held in group.permissions.all())),
        ))
    return creators


@transaction.atomic
def project_creator_grant(username: str):
    """Let the active account ``username`` create projects (the permission on the account itself)."""
    user = get_user_model().objects.filter(username=username, is_active=True).first()
    if user is None:
        raise ValidationError({"username": f"No active account is called {username!r}."})
    user.user_permissions.add(_permission())
    return user


@transaction.atomic
def project_creator_revoke(user) -> list[str]:
    """Take the permission off the account; returns the groups through which they still hold it."""
    permission = _permission()
    user.user_permissions.remove(permission)
    return sorted(user.groups.filter(permissions=permission).values_list("name", flat=True))
