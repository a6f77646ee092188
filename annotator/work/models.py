from django.conf import settings
from django.db import models

from ..domain.protocol.document import COGNIBENCH
from ..domain.vocabulary import Severity, TripletLabel


class Assignment(models.Model):
    """One annotator's slot on one turn; a turn has at most ``project.overlap`` of them."""

    class Status(models.TextChoices):
        ASSIGNED = "assigned", "Assigned"
        IN_PROGRESS = "in_progress", "In progress"
        SUBMITTED = "submitted", "Submitted"
        # Taken back by a lead (stale or reassigned): kept for the audit trail,
        # no longer counts as a slot and can no longer be edited.
        RELEASED = "released", "Released"

    project = models.ForeignKey("annotator.Project", on_delete=models.CASCADE, related_name="assignments")
    turn = models.ForeignKey("annotator.Turn", on_delete=models.CASCADE, related_name="assignments")
    annotator = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="assignments")
    status = models.CharField(max_length=20, choices=Status.choices, default=Status.ASSIGNED)
    is_qualification = models.BooleanField(default=False)
    # Bumped on every change; a client that sends an older version gets a conflict.
    version = models.PositiveIntegerField(default=0)
    assigned_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    submitted_at = models.DateTimeField(null=True, blank=True)
    # Last change by the annotator (answer, note, evidence); leads release stale ones.
    last_activity_at = models.DateTimeField(null=True, blank=True)
    # The protocol version this slot is annotated with; none: the project's current one. Set to the outgoing
    # version when a project with annotations moves to a new version (projects.protocol_services).
    protocol_version = models.ForeignKey(
        "annotator.ProtocolVersion", null=True, blank=True, on_delete=models.SET_NULL, related_name="assignments",
    )

    class Meta:
        constraints = [models.UniqueConstraint(fields=["turn", "annotator"], name="one_slot_per_annotator")]
        indexes = [
            models.Index(fields=["annotator", "status"]),
            models.Index(fields=["project", "status"]),
        ]

    def __str__(self):
        return f"{self.annotator} on {self.turn_id} ({self.status})"


class SentenceAnnotation(models.Model):
    """An annotator's answers for one sentence: the whole decision path, not only the label."""

    assignment = models.ForeignKey(Assignment, on_delete=models.CASCADE, related_name="sentence_annotations")
    sentence = models.ForeignKey("annotator.Sentence", on_delete=models.CASCADE, related_name="annotations")
    path = models.JSONField(default=dict, blank=True)
    label = models.CharField(max_length=20, blank=True, help_text="A label of the protocol the annotation was made with.")
    note = models.TextField(blank=True)
    seconds_spent = models.FloatField(default=0)
    severity = models.PositiveSmallIntegerField(choices=Severity.choices, null=True, blank=True)
    justification = models.TextField(blank=True)
    error_type = models.CharField(max_length=100, blank=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["assignment", "sentence"], name="one_answer_per_sentence")]

    def get_label_display(self):
        # The field lost its choices (labels are the project's protocol's); the built-in names stand in until
        # the page passes its protocol (templates: ``{{ value|label_name:protocol }}``).
        return COGNIBENCH.label_name(self.label)


    def __str__(self):
        return f"{self.sentence_id}: {self.label or 'incomplete'}"


class EvidenceSpan(models.Model):
    """A span of the reference that supports a sentence (or a claim), PROBE style."""

    annotation = models.ForeignKey(
        SentenceAnnotation, null=True, blank=True, on_delete=models.CASCADE, related_name="evidence"
    )
    triplet_annotation = models.ForeignKey(
        "annotator.TripletAnnotation", null=True, blank=True, on_delete=models.CASCADE, related_name="evidence"
    )
    adjudication = models.ForeignKey(
        "annotator.Adjudication", null=True, blank=True, on_delete=models.CASCADE, related_name="evidence"
    )
    start = models.PositiveIntegerField(help_text="Character offset into the reference.")
    end = models.PositiveIntegerField()
    text = models.TextField(blank=True, help_text="The reference text between the offsets, kept for review.")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["start", "id"]


class TripletAnnotation(models.Model):
    assignment = models.ForeignKey(Assignment, on_delete=models.CASCADE, related_name="triplet_annotations")
    triplet = models.ForeignKey("annotator.ClaimTriplet", on_delete=models.CASCADE, related_name="annotations")
    label = models.CharField(max_length=20, choices=TripletLabel.choices)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["assignment", "triplet"], name="one_label_per_triplet")]


class AnnotationEvent(models.Model):
    """Audit history: every change to an annotation, who made it, old -> new.

    ``request_id`` is the client's idempotency key: a request replayed with the
    same key is recognised and not applied twice.
    """

    assignment = models.ForeignKey(Assignment, on_delete=models.CASCADE, related_name="events")
    sentence = models.ForeignKey("annotator.Sentence", null=True, blank=True, on_delete=models.CASCADE, related_name="+")
    actor = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+")
    action = models.CharField(max_length=40)
    old = models.JSONField(null=True, blank=True)
    new = models.JSONField(null=True, blank=True)
    request_id = models.CharField(max_length=64, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["created_at", "id"]
        constraints = [
            models.UniqueConstraint(
                fields=["assignment", "request_id"],
                condition=~models.Q(request_id=""),
                name="idempotent_request",
            )
        ]
