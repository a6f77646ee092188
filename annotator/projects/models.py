from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import models

from ..domain.languages import LanguageError, language_code
from ..domain.protocol.document import COGNIBENCH
from ..domain.vocabulary import (
    DEFAULT_ERROR_TYPES, AdjudicationOrder, DrawnTurnReview, ImportedGold, ProtocolMode, Role,
)
from .protocols import protocol_mode_name


def default_error_types():
    return list(DEFAULT_ERROR_TYPES)


def validate_language(value: str) -> None:
    """A language the studio knows (``domain.languages.language_code``), or empty."""
    try:
        language_code(value)
    except LanguageError as exc:
        raise ValidationError(str(exc)) from None


class Project(models.Model):
    """An annotation project: its data, its people and how they label."""

    slug = models.SlugField(unique=True)
    name = models.CharField(max_length=200)
    guidelines = models.TextField(blank=True, help_text="Markdown shown to annotators.")
    overlap = models.PositiveSmallIntegerField(
        default=2, help_text="How many distinct annotators judge each turn."
    )
    protocol_mode = models.CharField(max_length=20, choices=ProtocolMode.choices, default=ProtocolMode.SEQUENTIAL)
    show_prelabels = models.BooleanField(
        default=False,
        help_text="Show LLM pre-labels to annotators (off by default, to avoid anchoring).",
    )
    require_evidence = models.BooleanField(
        default=False, help_text="Faithful and grounded answers need at least one evidence span."
    )
    adjudicators_may_annotate = models.BooleanField(
        default=False,
        help_text="Adjudicators may also take annotation slots. Whoever holds a slot on a turn is blind on it "
        "until they submit, and never adjudicates a turn they annotated.",
    )
    imported_gold = models.CharField(
        max_length=20, choices=ImportedGold.choices, default=ImportedGold.FINAL,
        help_text="Two annotators who disagree always reach the adjudication queue; this says whether gold imported "
        "with the data stays when they agree (final) or is replaced by their agreement (reference).",
    )
    adjudication_order = models.CharField(
        max_length=20, choices=AdjudicationOrder.choices, default=AdjudicationOrder.OLDEST,
        help_text="The order of the adjudication queue.",
    )
    qualification_pass_mark = models.FloatField(
        default=0.85, help_text="Sentence accuracy needed on the qualification set (0-1)."
    )
    qualification_auto_retries = models.PositiveSmallIntegerField(
        default=0,
        help_text="How many failed qualification attempts open a new attempt by themselves (0: a lead allows each "
        "retry).",
    )
    drawn_turn_review = models.CharField(
        max_length=20, choices=DrawnTurnReview.choices, default=DrawnTurnReview.DOUBLE,
        help_text="How turns drawn for human checks of the pre-labeler become gold.",
    )
    # Optional views of a hallucination (RefChecker, HalluDetect, Face4RAG).
    enable_triplets = models.BooleanField(default=False)
    enable_severity = models.BooleanField(default=False)
    enable_error_types = models.BooleanField(default=False)
    severity_threshold = models.PositiveSmallIntegerField(
        default=4, help_text="Exports and reports can keep hallucinations of at least this severity."
    )
    error_types = models.JSONField(default=default_error_types, blank=True)
    default_language = models.CharField(
        max_length=50, blank=True, default="", validators=[validate_language],
        help_text="The language of dialogues that name none (an ISO 639-1 code such as zh, or a name such as "
        "chinese; empty: English). It chooses how imported responses are cut into units (docs/languages.md).",
    )
    # Versions are only ever deleted with their project (SET_NULL lets that cascade; PROTECT refused it).
    protocol_version = models.ForeignKey(
        "annotator.ProtocolVersion", null=True, blank=True, on_delete=models.SET_NULL, related_name="+",
        help_text="The protocol new work follows; none: CogniBench's built-in protocol.",
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name"]

    def __str__(self):
        return self.name

    def get_protocol_mode_display(self) -> str:
        """The mode worded for the project's protocol (Django's own would give the stored choice's words)."""
        return protocol_mode_name(self)


class ProtocolVersion(models.Model):
    """One version of a project's protocol document. Never edited: a change is a new version.

    ``label_mapping`` says, for each label of the previous version, the label of this one it carries over to
    (or null where the meaning does not carry over); it is required once the project had annotations, whose
    records stay as the annotators chose them, under the version they were made with.
    """

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="protocol_versions")
    number = models.PositiveIntegerField(help_text="1, 2, ... within the project.")
    document = models.JSONField(help_text="The canonical protocol document (docs/protocols.md).")
    checksum = models.CharField(max_length=64)
    previous = models.ForeignKey("self", null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    label_mapping = models.JSONField(default=dict, blank=True)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["project", "number"]
        constraints = [models.UniqueConstraint(fields=["project", "number"], name="one_protocol_version_number")]

    def __str__(self):
        return f"{self.project.slug}: {self.document.get('id')} v{self.document.get('version')} (#{self.number})"


class Membership(models.Model):
    """A person's role in one project: the only source of a project role (superusers lead every project)."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="memberships")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="memberships")
    role = models.CharField(max_length=20, choices=Role.choices, default=Role.ANNOTATOR)
    joined_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["project", "user"], name="one_role_per_project")]

    def __str__(self):
        return f"{self.user} - {self.role} of {self.project}"


class ProjectInvite(models.Model):
    """A link a lead shares so that people join the project with a role, without the lead typing (or learning)
    their username. Whoever opens the link before it expires or is revoked may join: signed in, or by signing in
    or up on the invite page (projects/join_views.py); not someone removed from the project since it was made."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="invites")
    # secrets.token_urlsafe(32): the link is the only key, so it must not be guessed.
    token = models.CharField(max_length=64, unique=True)
    role = models.CharField(max_length=20, choices=Role.choices, default=Role.ANNOTATOR)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)
    expires_at = models.DateTimeField()
    revoked_at = models.DateTimeField(null=True, blank=True)
    uses = models.PositiveIntegerField(default=0, help_text="How many people joined with this link.")

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self):
        return f"{self.get_role_display()} invite to {self.project}"


class MembershipRemoval(models.Model):
    """When someone was removed from a project: an invite link made before then no longer lets them back in
    (a lead who removed them makes a new link, or adds them by username, to take them back)."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="removals")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    removed_at = models.DateTimeField()
    removed_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+")

    class Meta:
        indexes = [models.Index(fields=["project", "user", "removed_at"], name="removal_by_member")]

    def __str__(self):
        return f"{self.user} removed from {self.project} at {self.removed_at:%Y-%m-%d %H:%M}"


class GuidelineExample(models.Model):
    """A positive or negative example shown at one protocol step."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="guideline_examples")
    step = models.CharField(max_length=20, help_text="A step of the project's protocol.")
    text = models.TextField(help_text="The example sentence (or question).")
    is_positive = models.BooleanField(default=True, help_text="Positive: the answer is yes / the first option.")
    explanation = models.TextField(blank=True)
    source_question = models.ForeignKey(
        "annotator.Question", null=True, blank=True, on_delete=models.SET_NULL, related_name="promoted_examples"
    )
    position = models.PositiveIntegerField(default=0)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["step", "position", "id"]

    def get_step_display(self):
        return COGNIBENCH.step_question(self.step)


    def __str__(self):
        return f"{self.get_step_display()}: {self.text[:60]}"
