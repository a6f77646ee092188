"""Read-side queries about projects (selectors read, services write)."""

from dataclasses import dataclass

from django.contrib.auth import get_user_model
from django.db.models import Count, Q
from django.utils import timezone

from ..access import projects_for
from ..domain.segmentation import LONG_UNIT_CHARS
from ..domain.vocabulary import Role
from ..models import (Assignment, GoldLabel, Membership, MembershipRemoval, ProjectInvite, ProtocolVersion, Sentence,
                      SentenceAnnotation, Turn, UnitFlag)


# One definition of a project's size, wherever it is shown: the turns to annotate, apart from the qualification
# turns (annotators label those once, before real work, and they never become gold by agreement).
WORK_TURNS = Q(dialogues__turns__is_qualification=False)
QUALIFICATION_TURNS = Q(dialogues__turns__is_qualification=True)


def project_list_for(user):
    """The user's projects with their size, for the home page."""
    return projects_for(user).annotate(
        turn_count=Count("dialogues__turns", filter=WORK_TURNS, distinct=True),
        qualification_turn_count=Count("dialogues__turns", filter=QUALIFICATION_TURNS, distinct=True),
    ).order_by("name")


def leads_any_project(user) -> bool:
    return Membership.objects.filter(user=user, role=Role.LEAD).exists()


def project_progress(project) -> dict:
    """Counts a lead and an annotator look at: turns, sentences, slots filled, gold."""
    turns = Turn.objects.filter(dialogue__project=project, is_qualification=False)
    turn_count = turns.count()
    qualification_turns = Turn.objects.filter(dialogue__project=project, is_qualification=True).count()
    sentences = Sentence.objects.filter(turn__dialogue__project=project, turn__is_qualification=False)
    sentence_count = sentences.count()
    submitted = Assignment.objects.filter(
        project=project, status=Assignment.Status.SUBMITTED, is_qualification=False
    ).count()
    slots = turn_count * project.overlap
    gold_count = sentences.filter(gold__isnull=False).count()
    return {
        "turns": turn_count,
        "qualification_turns": qualification_turns,
        "sentences": sentence_count,
        "slots": slots,
        "submitted_slots": submitted,
        "percent_done": round(100 * submitted / slots, 1) if slots else 0.0,
        "gold": gold_count,
        "gold_percent": round(100 * gold_count / sentence_count, 1) if sentence_count else 0.0,
    }


def annotator_counts(project, user) -> dict:
    mine = Assignment.objects.filter(project=project, annotator=user, is_qualification=False)
    return mine.aggregate(
        assigned=Count("id", filter=Q(status=Assignment.Status.ASSIGNED)),
        in_progress=Count("id", filter=Q(status=Assignment.Status.IN_PROGRESS)),
        submitted=Count("id", filter=Q(status=Assignment.Status.SUBMITTED)),
    )


def people_addable_by(user):
    """The accounts ``user`` may add to a project by username: people they can already see.

    A lead sees the members of the projects they lead (a site administrator sees every account). Anyone else
    joins with an invite link, so that a lead cannot learn which usernames exist on the site.
    """
    accounts = get_user_model().objects.filter(is_active=True)
    if user.is_superuser:
        return accounts
    led = Membership.objects.filter(user=user, role=Role.LEAD).values("project_id")
    return accounts.filter(memberships__project_id__in=led).distinct()


# Said before a removal is confirmed and after it is done (invite_accept refuses such a link).
INVITES_AFTER_REMOVAL = ("Invite links made before the removal no longer let them back in; to take them back, "
                         "make a new link or add them by username.")


@dataclass
class RemovalEffects:
    """What removing a member does, shown to the lead before they confirm and after."""

    username: str
    slots: list  # their unsubmitted assignments: released (kept in the audit), the turns' slots open again
    flags: list  # their open unit flags: closed with a note

    @property
    def work_slots(self) -> int:
        return sum(1 for slot in self.slots if not slot.is_qualification)

    @property
    def qualification_slots(self) -> int:
        return sum(1 for slot in self.slots if slot.is_qualification)

    def summary(self) -> str:
        parts = []
        if self.work_slots:
            parts.append(f"{self.work_slots} unsubmitted turn{'s' if self.work_slots != 1 else ''} released "
                         "(their slots open for someone else; what they labelled there stays in the audit)")
        if self.qualification_slots:
            parts.append(f"{self.qualification_slots} unfinished qualification turn"
                         f"{'s' if self.qualification_slots != 1 else ''} released")
        if self.flags:
            parts.append(f"{len(self.flags)} open flag{'s' if len(self.flags) != 1 else ''} closed with a note "
                         "(the units stay as they are)")
        if not parts:
            parts.append("nothing to release: no unsubmitted turn and no open flag")
        return (f"{self.username}: " + "; ".join(parts) + ". Their submitted work stays. "
                + INVITES_AFTER_REMOVAL)


def removal_effects(membership) -> RemovalEffects:
    """What ``membership_remove`` would do to this member's slots and flags."""
    slots = list(Assignment.objects.filter(
        project_id=membership.project_id, annotator_id=membership.user_id,
        status__in=(Assignment.Status.ASSIGNED, Assignment.Status.IN_PROGRESS),
    ).order_by("id"))
    flags = list(UnitFlag.objects.filter(
        turn__dialogue__project_id=membership.project_id, flagged_by_id=membership.user_id,
        status=UnitFlag.Status.OPEN,
    ).order_by("id"))
    return RemovalEffects(username=membership.user.get_username(), slots=slots, flags=flags)


# A link for one person (Label Studio's single-use invite) is marked in its token, as the invite has no field for it
# (no migration): "." never occurs in secrets.token_urlsafe's alphabet, so no link for many starts with this.
SINGLE_USE_PREFIX = "once."


def invite_is_single_use(invite) -> bool:
    return invite.token.startswith(SINGLE_USE_PREFIX)


def invite_is_used_up(invite) -> bool:
    """A link for one person that someone joined with: it lets nobody else in."""
    return invite_is_single_use(invite) and invite.uses >= 1


INVITE_CLOSED = ("This invite link has expired, was revoked or was for one person who has joined with it: ask the "
                 "project's lead for a new one.")


def invite_is_open(invite) -> bool:
    return invite.revoked_at is None and invite.expires_at > timezone.now() and not invite_is_used_up(invite)


def invite_by_token(token: str):
    """The invite this link names, open or not (the join page says which), or None."""
    if not token or len(token) > 64:
        return None
    return ProjectInvite.objects.select_related("project").filter(token=token).first()


def open_invites(project):
    return ProjectInvite.objects.filter(project=project, revoked_at__isnull=True, expires_at__gt=timezone.now()).exclude(
        token__startswith=SINGLE_USE_PREFIX, uses__gte=1)


def removed_since(invite, user) -> bool:
    """Whether ``user`` was removed from the invite's project after the invite was made."""
    return MembershipRemoval.objects.filter(project_id=invite.project_id, user_id=user.pk,
                                            removed_at__gte=invite.created_at).exists()


def members_of(project):
    return Membership.objects.filter(project=project).select_related("user").order_by("role", "user__username")


def setup_steps(project, progress: dict, units_review: tuple[list, int] = ([], 0)) -> list[dict]:
    """The lead's guide from an empty project to an annotated one: what each step needs and whether it is done.

    ``progress`` is ``project_progress(project)``, ``units_review`` ``corpus.units.selectors.units_to_review(project)``
    (the units that look wrong, and how many; read by the caller: the units feature sits above this one). Each step: ``key``, ``title``, ``done``, ``status`` (what is
    there now) and the page that does it (``url_name``, with the anchor ``fragment``).
    """
    roles = dict(Membership.objects.filter(project=project).values_list("role").annotate(count=Count("id")))
    annotating = roles.get(Role.ANNOTATOR, 0)
    if project.adjudicators_may_annotate:
        annotating += roles.get(Role.ADJUDICATOR, 0) + roles.get(Role.LEAD, 0)
    needed = max(project.overlap, 2)
    adjudicators = roles.get(Role.ADJUDICATOR, 0)
    people = (f"{annotating} of the {needed} annotators each turn needs, {adjudicators} adjudicator"
              f"{'s' if adjudicators != 1 else ''}, {roles.get(Role.LEAD, 0)} lead{'s' if roles.get(Role.LEAD, 0) != 1 else ''}")
    qualification = progress["qualification_turns"]
    version = project.protocol_version
    protocol_name = (f"{version.document.get('name', 'protocol')} (version {version.number})" if version is not None
                     else "CogniBench's built-in protocol, the default, not chosen yet")
    units, units_count = units_review
    return [
        {"key": "import", "title": "Import the data", "done": progress["turns"] > 0,
         "status": f"{progress['turns']} turns, {progress['sentences']} sentences" if progress["turns"] else
                   "No turns yet.",
         "url_name": "import_upload", "action": "Import a file"},
        {"key": "units", "title": "Review units", "done": progress["turns"] > 0 and not units_count,
         "status": (f"{units_count} unit{'s' if units_count != 1 else ''} may hold several sentences or be too long "
                    f"(over {LONG_UNIT_CHARS} characters): split them on their turn's page." if units_count else
                    # What was checked, no more: the segmenter that finds one sentence in a unit is the one that cut
                    # it, so a sentence end it missed is missed here too.
                    f"No unit is over {LONG_UNIT_CHARS} characters, and the language's segmenter (the one that cut "
                    "the units) finds one sentence in each; a sentence end it misses is not found here: annotators "
                    "flag such units from their screen." if progress["turns"] else "Import data first."),
         "units": units, "url_name": "turn_list", "action": "All turns"},
        # Done once the lead chose one (a version is set): the built-in default is no choice.
        {"key": "protocol", "title": "Choose the protocol", "done": version is not None,
         "status": f"{protocol_name}, {project.get_protocol_mode_display().lower()}; evidence "
                   f"{'required' if project.require_evidence else 'optional'}; pre-labels "
                   f"{'shown' if project.show_prelabels else 'hidden'} to annotators (settings).",
         "url_name": "project_protocol", "action": "Choose or edit the protocol"},
        {"key": "people", "title": "Add people", "done": annotating >= needed, "status": people + ".",
         "url_name": "project_people", "action": "Add people"},
        {"key": "qualification", "title": "Qualification (optional)", "done": qualification > 0,
         "status": f"{qualification} qualification turns; pass mark {project.qualification_pass_mark:.0%}."
                   if qualification else "None: annotators get real turns at once.",
         "url_name": "qa:qualification", "action": "Set up qualification"},
        {"key": "start", "title": "Start", "done": progress["submitted_slots"] > 0,
         "status": (f"{progress['submitted_slots']} of {progress['slots']} slots submitted." if progress["submitted_slots"]
                    else "Annotators start from their queue (the project's page, “Your annotation queue”)."),
         "url_name": "workspace_lead", "action": "Who holds what"},
    ]


def project_has_annotations(project) -> bool:
    """Whether anything in the project was labelled under its protocol (its version is then frozen):
    an annotator's answer, or gold (imported, agreed or adjudicated)."""
    answered = SentenceAnnotation.objects.filter(assignment__project=project).exclude(path={}, label="")
    return answered.exists() or GoldLabel.objects.filter(sentence__turn__dialogue__project=project).exists()


def protocol_versions(project) -> list:
    """The project's stored versions, newest first."""
    return list(ProtocolVersion.objects.filter(project=project).select_related("created_by").order_by("-number"))
