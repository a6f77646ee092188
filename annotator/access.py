"""Permission checks in one place (Zulip's access_* pattern).

Every view, API view and export fetches the objects a request names through
these getters. They raise Http404 rather than PermissionDenied where the mere
existence of the object must not leak to someone outside the project.
"""

from django.db.models import OuterRef, QuerySet, Subquery
from django.http import Http404

from .models import Assignment, Dialogue, Membership, Project, Turn
from .selectors.joined import Join, JoinedSelect
from .vocabulary import Role

# Which roles may do what. A lead can do everything an adjudicator can.
ADJUDICATING_ROLES = frozenset({Role.ADJUDICATOR, Role.LEAD})
LEAD_ROLES = frozenset({Role.LEAD})
ANNOTATING_ROLES = frozenset({Role.ANNOTATOR})


_ROLES = "_membership_cache"  # the roles role_in remembers on a project object, by user id


def role_in(user, project: Project) -> str | None:
    """The user's role in the project; staff count as leads everywhere."""
    if not user.is_authenticated:
        return None
    if user.is_staff:
        return Role.LEAD
    roles = project.__dict__.setdefault(_ROLES, {})
    if user.pk not in roles:
        # Remembered on this project object: one request asks several times (view, services, templates).
        roles[user.pk] = Membership.objects.filter(project=project, user=user).values_list("role", flat=True).first()
    return roles[user.pk]


def forget_roles(project: Project) -> None:
    """Drop the roles remembered on ``project`` (after its memberships change)."""
    project.__dict__.pop(_ROLES, None)


def _role_column(user, project_ref: str) -> Subquery:
    """The user's role in the project ``project_ref`` names, as a column of the query that fetches it."""
    return Subquery(Membership.objects.filter(project_id=OuterRef(project_ref), user_id=user.pk).values("role")[:1])


def _remember_role(project: Project, user, role) -> None:
    project.__dict__.setdefault(_ROLES, {})[user.pk] = role


def projects_for(user) -> QuerySet[Project]:
    """The projects a user may see at all."""
    if not user.is_authenticated:
        return Project.objects.none()
    if user.is_staff:
        return Project.objects.all()
    return Project.objects.filter(memberships__user=user).distinct()


def access_project(user, slug: str, roles=None) -> Project:
    """The project with this slug, if the user has one of ``roles`` in it (any role if None).

    A non-member gets 404; a member without the role gets 404 too, so that a
    lead-only page does not confirm what it holds to an annotator.
    """
    queryset = Project.objects.all()
    if user.is_authenticated and not user.is_staff:
        # The user's role comes with the project, in one query (asked on every project page).
        queryset = queryset.annotate(member_role=_role_column(user, "pk"))
    try:
        project = queryset.get(slug=slug)
    except Project.DoesNotExist:
        raise Http404("No such project") from None
    if hasattr(project, "member_role"):
        _remember_role(project, user, project.member_role)
    role = role_in(user, project)
    if role is None or (roles is not None and role not in roles):
        raise Http404("No such project")
    project.user_role = role
    return project


def access_project_as_lead(user, slug: str) -> Project:
    return access_project(user, slug, roles=LEAD_ROLES)


def access_project_as_adjudicator(user, slug: str) -> Project:
    return access_project(user, slug, roles=ADJUDICATING_ROLES)


def access_assignment(user, assignment_id: int) -> Assignment:
    """An assignment the user holds, with its project, turn and dialogue. Another annotator's is a 404.

    The user's role in the assignment's project comes in the same query, so that
    ``role_in`` on ``assignment.project`` costs nothing afterwards (every
    annotation request asks it).
    """
    try:
        found = _ASSIGNMENT_OF_HOLDER.fetch_one([user.pk, int(assignment_id), user.pk]) if user.is_authenticated else None
    except (TypeError, ValueError, OverflowError):
        found = None
    if found is None:
        raise Http404("No such assignment")
    assignment, (role,) = found
    assignment.holder_role = role
    _remember_role(assignment.project, user, role)
    return assignment


# Every annotation request runs this: written once (selectors/joined.py says why).
_ASSIGNMENT_OF_HOLDER = JoinedSelect(
    Assignment, "a",
    joins=[Join(Project, "p", ("a", "project")), Join(Turn, "t", ("a", "turn")), Join(Dialogue, "d", ("t", "dialogue"))],
    extra_columns=[f"(SELECT m.role FROM {Membership._meta.db_table} m "
                   "WHERE m.project_id = a.project_id AND m.user_id = %s LIMIT 1)"],
    where="a.id = %s AND a.annotator_id = %s",
)


def is_lead(user, project: Project) -> bool:
    return role_in(user, project) in LEAD_ROLES


def can_adjudicate(user, project: Project) -> bool:
    return role_in(user, project) in ADJUDICATING_ROLES
