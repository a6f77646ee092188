"""Permission checks in one place (Zulip's access_* pattern).

Every view, API view and export fetches the objects a request names through
these getters. They raise Http404 rather than PermissionDenied where the mere
existence of the object must not leak to someone outside the project.

Two rules are written here and nowhere else:

- A project role comes only from a Membership. Superusers (site administrators)
  are leads of every project; the staff flag alone grants nothing (it only opens
  the Django admin, which shows a staff lead the projects they lead).
- Whoever holds an unsubmitted annotation slot on a turn is blind on that turn,
  whatever their role: no gold, no other annotator's work, no imported
  annotations, no pre-labels, no adjudication of it (``blind_turn_ids``).
"""

from django.core.exceptions import PermissionDenied
from django.db.models import QuerySet
from django.http import Http404

from .models import Assignment, Dialogue, Membership, Project, Turn
from .fastsql.joined import Join, JoinedSelect
from .domain.vocabulary import Role

# Which roles may do what. A lead can do everything an adjudicator can.
ADJUDICATING_ROLES = frozenset({Role.ADJUDICATOR, Role.LEAD})
LEAD_ROLES = frozenset({Role.LEAD})
ANNOTATING_ROLES = frozenset({Role.ANNOTATOR})


_ROLES = "_membership_cache"  # the roles role_in remembers on a project object, by user id
_QUALIFICATION_SET = "_has_qualification_set"  # whether the project has qualification turns, read with it


def role_in(user, project: Project) -> str | None:
    """The user's role in the project: their Membership's; superusers are leads everywhere, staff are not."""
    if not user.is_authenticated:
        return None
    if user.is_superuser:
        return Role.LEAD
    roles = project.__dict__.setdefault(_ROLES, {})
    if user.pk not in roles:
        # Remembered on this project object: one request asks several times (view, services, templates).
        roles[user.pk] = Membership.objects.filter(project=project, user=user).values_list("role", flat=True).first()
    return roles[user.pk]


def forget_roles(project: Project) -> None:
    """Drop the roles remembered on ``project`` (after its memberships change)."""
    project.__dict__.pop(_ROLES, None)


def _remember_role(project: Project, user, role) -> None:
    project.__dict__.setdefault(_ROLES, {})[user.pk] = role


def remember_qualification_set(project: Project, exists: bool) -> None:
    project.__dict__[_QUALIFICATION_SET] = exists


def known_qualification_set(project: Project) -> bool | None:
    """Whether the project has qualification turns, as read with the project (``access_project``); None when
    this project object was read otherwise."""
    return project.__dict__.get(_QUALIFICATION_SET)


def qualification_turn_condition(project_id: str) -> str:
    """SQL: the turn ``t`` is a qualification turn of the project whose id is ``project_id`` (a column or %s).

    Driven from the partial index ``turn_qualification`` (the qualification turns of every project, a handful
    each), on SQLite and PostgreSQL alike (tests/test_qualification_plans.py reads both plans). Joined the
    other way, from the project's dialogues, SQLite reads every turn of the project (8–12 ms on 24,000 turns
    against 0.003 ms); an ORDER BY on the turn's (dialogue, index) does the same, for that index's order.
    """
    return (f"t.is_qualification AND EXISTS (SELECT 1 FROM {Dialogue._meta.db_table} d "
            f"WHERE d.id = t.dialogue_id AND d.project_id = {project_id})")


def projects_for(user) -> QuerySet[Project]:
    """The projects a user may see at all."""
    if not user.is_authenticated:
        return Project.objects.none()
    if user.is_superuser:
        return Project.objects.all()
    return Project.objects.filter(memberships__user=user).distinct()


def led_projects(user) -> QuerySet[Project]:
    """The projects the user leads (every project for a superuser)."""
    if not user.is_authenticated:
        return Project.objects.none()
    if user.is_superuser:
        return Project.objects.all()
    return Project.objects.filter(memberships__user=user, memberships__role=Role.LEAD)


def may_create_projects(user) -> bool:
    """Creating projects is for people the site administrator allows to: the permission ``annotator.add_project``
    (on the user or a group of theirs; superusers have every permission). The creator leads the new project."""
    return user.is_authenticated and user.is_active and user.has_perm("annotator.add_project")


def access_project(user, slug: str, roles=None) -> Project:
    """The project with this slug, if the user has one of ``roles`` in it (any role if None).

    A non-member gets 404; a member without the role gets 404 too, so that a
    lead-only page does not confirm what it holds to an annotator.
    """
    if user.is_authenticated and not user.is_superuser:
        # The user's role comes with the project, in one statement written once (asked on every project page).
        found = _PROJECT_WITH_ROLE.fetch_one([user.pk, slug])
        if found is None:
            raise Http404("No such project")
        project, (member_role, has_qualification_set) = found
        _remember_role(project, user, member_role)
        remember_qualification_set(project, bool(has_qualification_set))
    else:
        try:
            project = Project.objects.get(slug=slug)
        except Project.DoesNotExist:
            raise Http404("No such project") from None
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


# Every project page runs this: written once (fastsql/joined.py says why). Whether the project has a
# qualification set comes with it: "next item" asks on every Start, and most projects have none (then no
# statement of its own; a few index entries read here).
_PROJECT_WITH_ROLE = JoinedSelect(
    Project, "p", joins=[],
    extra_columns=[f"(SELECT m.role FROM {Membership._meta.db_table} m WHERE m.project_id = p.id AND m.user_id = %s LIMIT 1)",
                   f"EXISTS (SELECT 1 FROM {Turn._meta.db_table} t WHERE {qualification_turn_condition('p.id')})"],
    where="p.slug = %s",
)

# Every annotation request runs this: written once (fastsql/joined.py says why).
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


# --- blindness: the slot-holder rule ---------------------------------------------------------------

# A slot still being worked on: its holder has not committed to their own answer yet.
UNSUBMITTED = (Assignment.Status.ASSIGNED, Assignment.Status.IN_PROGRESS)

BLIND_EXPORT_MESSAGE = (
    "You hold an unsubmitted annotation slot in this project: submit it (or have a lead release it) before "
    "exporting gold. An export without the turns you annotate would be silently incomplete gold."
)
BLIND_REPORT_MESSAGE = (
    "You hold an unsubmitted annotation slot in this project: its agreement and gold figures are shown "
    "again once you have submitted it (or a lead has released it)."
)


class BlindRefused(PermissionDenied):
    """A view of the whole project's gold refused to someone blind on some of its turns (403, the message says why)."""


def blind_turn_ids(user, project: Project) -> QuerySet:
    """The turns of ``project`` on which ``user`` holds an unsubmitted slot, as a subquery of turn ids.

    Whatever the user's role (annotator, adjudicator, lead, superuser), on these turns
    they get no gold, no one else's labels, notes or evidence, no imported annotations
    or source metadata, no pre-labels and no adjudication. Every gold, annotation,
    prediction, adjudication, turn-detail, report and export path serving a user asks
    this or one of the helpers below.
    """
    if not user.is_authenticated:
        return Assignment.objects.none().values("turn_id")
    return Assignment.objects.filter(project=project, annotator=user, status__in=UNSUBMITTED).values("turn_id")


def blind_turn_ids_everywhere(user) -> QuerySet:
    """The turns of every project on which ``user`` holds an unsubmitted slot (the admin spans projects)."""
    if not user.is_authenticated:
        return Assignment.objects.none().values("turn_id")
    return Assignment.objects.filter(annotator=user, status__in=UNSUBMITTED).values("turn_id")


def is_blind_on(user, turn) -> bool:
    """Whether ``user`` holds an unsubmitted slot on ``turn`` (a Turn or its id)."""
    return user.is_authenticated and Assignment.objects.filter(
        turn_id=getattr(turn, "pk", turn), annotator=user, status__in=UNSUBMITTED
    ).exists()


def is_blind_in(user, project: Project) -> bool:
    """Whether ``user`` is blind on some turn of ``project``."""
    return blind_turn_ids(user, project).exists()


def refuse_if_blind_in(user, project: Project, message: str = BLIND_REPORT_MESSAGE) -> None:
    """Refuse a view of the whole project's gold (report, export, evaluation) to someone blind on part of it."""
    if is_blind_in(user, project):
        raise BlindRefused(message)


def access_turn_not_blind(user, project: Project, turn_id) -> Turn:
    """A turn of ``project`` to be shown with its gold or others' work; one the user is blind on is a 404."""
    try:
        turn = Turn.objects.select_related("dialogue").filter(pk=int(turn_id), dialogue__project=project).first()
    except (TypeError, ValueError, OverflowError):
        turn = None
    if turn is None or is_blind_on(user, turn):
        raise Http404("No such turn")
    return turn


def may_annotate(user, project: Project) -> bool:
    """Whether the user may take annotation slots in the project.

    Annotators always; adjudicators (and leads, who can do all an adjudicator can) only where
    the project allows it (``Project.adjudicators_may_annotate``, off by default).
    """
    role = role_in(user, project)
    if role in ANNOTATING_ROLES:
        return True
    return role in ADJUDICATING_ROLES and project.adjudicators_may_annotate


# --- source metadata: leads only, but for an explicit allow-list ------------------------------------

# The keys of ``metadata`` (Dialogue, Turn, ClaimTriplet) that annotators may read, by model: the one
# place that says so. Everything else an import keeps there is data for leads only: imported
# annotations, adjudications and ``decided_by`` (JSONL), CogniBench's labels and list fields, its
# ``current_turn_processed`` with the ``<irrelevant>`` marks and ``num_irrelevant``, record ids that
# find the public labels. Nothing imported so far is meant for annotators except which knowledge-graph
# field and extractor a RefChecker triplet came from.
ANNOTATOR_METADATA_KEYS = {
    "dialogue": frozenset(),
    "turn": frozenset(),
    "triplet": frozenset({"kg_field", "extractor"}),
}


class MetadataAccess:
    """Who reads the whole metadata of what: a lead, except on the turns (and their dialogues) they are
    blind on. Built once per request (``metadata_access``); serializers ask ``visible``.

    The source's record ids follow the same rule (``record_id``, ``turn_name``): CogniBench's public release
    keys its labels by them (``labels.json["4183_en_3"]``), so whoever reads a turn's record id while
    annotating it can look its answers up. Everyone else names a turn by its neutral ``Turn <pk>``."""

    def __init__(self, is_lead: bool = False, blind_turns=(), blind_dialogues=()):
        self.is_lead = is_lead
        self.blind_turns = frozenset(blind_turns)
        self.blind_dialogues = frozenset(blind_dialogues)

    def visible(self, kind: str, metadata, *, turn_id=None, dialogue_id=None) -> dict:
        """``metadata`` of a dialogue, turn or triplet (of ``turn_id`` / ``dialogue_id``), as this reader may see it."""
        metadata = metadata if isinstance(metadata, dict) else {}
        if self.is_lead and turn_id not in self.blind_turns and dialogue_id not in self.blind_dialogues:
            return metadata
        allowed = ANNOTATOR_METADATA_KEYS[kind]
        return {key: value for key, value in metadata.items() if key in allowed}

    def sees_record_ids(self, *, turn_id=None, dialogue_id=None) -> bool:
        return self.is_lead and turn_id not in self.blind_turns and dialogue_id not in self.blind_dialogues

    def record_id(self, value, *, turn_id=None, dialogue_id=None):
        """A dialogue's or turn's ``external_id`` as this reader may see it: the id for a lead, else None."""
        return value if self.sees_record_ids(turn_id=turn_id, dialogue_id=dialogue_id) else None

    def turn_name(self, turn) -> str:
        """How pages name ``turn`` to this reader: its dialogue's record id and index for a lead, else ``Turn <pk>``."""
        if self.sees_record_ids(turn_id=turn.pk, dialogue_id=turn.dialogue_id):
            return f"{turn.dialogue.external_id} · turn {turn.index}"
        return neutral_turn_name(turn.pk)


def neutral_turn_name(turn_id) -> str:
    """A turn's name that says nothing about the source: its database id (a sequence, not the record id)."""
    return f"Turn {turn_id}"


ANNOTATOR_METADATA = MetadataAccess()  # what anyone but a lead gets (the default of every serializer)


def metadata_access(user, project: Project) -> MetadataAccess:
    """What ``user`` may read of the source's metadata and record ids in ``project``."""
    if role_in(user, project) not in LEAD_ROLES:
        return ANNOTATOR_METADATA
    blind = list(Turn.objects.filter(pk__in=blind_turn_ids(user, project)).values_list("pk", "dialogue_id"))
    return MetadataAccess(True, [turn for turn, _ in blind], [dialogue for _, dialogue in blind])


def turn_name(user, turn, project: Project | None = None) -> str:
    """``turn`` named for ``user``: record ids for a lead who is not blind on it, ``Turn <pk>`` for anyone else."""
    project = project if project is not None and project.pk == turn.dialogue.project_id else turn.dialogue.project
    if role_in(user, project) not in LEAD_ROLES or is_blind_on(user, turn):
        return neutral_turn_name(turn.pk)
    return MetadataAccess(True).turn_name(turn)
