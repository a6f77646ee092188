from django.conf import settings
from django.db import models

from ..domain.protocol.document import COGNIBENCH
from ..domain.vocabulary import GoldProvenance, Severity, TripletLabel


class GoldLabel(models.Model):
    """The final label of a sentence and where it came from."""

    sentence = models.OneToOneField("annotator.Sentence", on_delete=models.CASCADE, related_name="gold")
    label = models.CharField(max_length=20, help_text="A label of the project's protocol.")
    path = models.JSONField(default=dict, blank=True)
    provenance = models.CharField(max_length=20, choices=GoldProvenance.choices)
    reason = models.TextField(blank=True)
    severity = models.PositiveSmallIntegerField(choices=Severity.choices, null=True, blank=True)
    error_type = models.CharField(max_length=100, blank=True)
    decided_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    updated_at = models.DateTimeField(auto_now=True)

    def get_label_display(self):
        # The field lost its choices (labels are the project's protocol's); the built-in names stand in until
        # the page passes its protocol (templates: ``{{ value|label_name:protocol }}``).
        return COGNIBENCH.label_name(self.label)


    def __str__(self):
        return f"{self.sentence_id}: {self.label} ({self.provenance})"


class GoldEvent(models.Model):
    """History of gold: every change, old -> new, with its reason."""

    sentence = models.ForeignKey("annotator.Sentence", on_delete=models.CASCADE, related_name="gold_events")
    old_label = models.CharField(max_length=20, blank=True)
    new_label = models.CharField(max_length=20, blank=True)
    provenance = models.CharField(max_length=20, choices=GoldProvenance.choices, blank=True)
    reason = models.TextField(blank=True)
    actor = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["created_at", "id"]


class Adjudication(models.Model):
    """A sentence the annotators disagreed on, waiting for (or resolved by) a third person."""

    class Status(models.TextChoices):
        OPEN = "open", "Open"
        RESOLVED = "resolved", "Resolved"

    sentence = models.ForeignKey("annotator.Sentence", on_delete=models.CASCADE, related_name="adjudications")
    turn = models.ForeignKey("annotator.Turn", on_delete=models.CASCADE, related_name="adjudications")
    status = models.CharField(max_length=20, choices=Status.choices, default=Status.OPEN)
    adjudicator = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    path = models.JSONField(default=dict, blank=True)
    label = models.CharField(max_length=20, blank=True, help_text="A label of the project's protocol.")
    chosen_assignment = models.ForeignKey(
        "annotator.Assignment", null=True, blank=True, on_delete=models.SET_NULL, related_name="+",
        help_text="Set when the adjudicator sided with one annotator.",
    )
    reason = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    resolved_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["created_at", "id"]
        constraints = [
            models.UniqueConstraint(
                fields=["sentence"], condition=models.Q(status="open"), name="one_open_adjudication"
            )
        ]

    def get_label_display(self):
        # The field lost its choices (labels are the project's protocol's); the built-in names stand in until
        # the page passes its protocol (templates: ``{{ value|label_name:protocol }}``).
        return COGNIBENCH.label_name(self.label)



class TripletGold(models.Model):
    """The final label of a claim triplet (RefChecker view) and where it came from."""

    triplet = models.OneToOneField("annotator.ClaimTriplet", on_delete=models.CASCADE, related_name="gold")
    label = models.CharField(max_length=20, choices=TripletLabel.choices)
    provenance = models.CharField(max_length=20, choices=GoldProvenance.choices)
    reason = models.TextField(blank=True)
    decided_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    updated_at = models.DateTimeField(auto_now=True)

    def __str__(self):
        return f"triplet {self.triplet_id}: {self.label} ({self.provenance})"


class TripletAdjudication(models.Model):
    """A triplet the annotators labelled differently, waiting for (or resolved by) a third person."""

    class Status(models.TextChoices):
        OPEN = "open", "Open"
        RESOLVED = "resolved", "Resolved"

    triplet = models.ForeignKey("annotator.ClaimTriplet", on_delete=models.CASCADE, related_name="adjudications")
    turn = models.ForeignKey("annotator.Turn", on_delete=models.CASCADE, related_name="triplet_adjudications")
    status = models.CharField(max_length=20, choices=Status.choices, default=Status.OPEN)
    adjudicator = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    label = models.CharField(max_length=20, choices=TripletLabel.choices, blank=True)
    reason = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    resolved_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["created_at", "id"]
        constraints = [
            models.UniqueConstraint(
                fields=["triplet"], condition=models.Q(status="open"), name="one_open_triplet_adjudication"
            )
        ]


class GoldVersion(models.Model):
    """A per-project counter bumped by every change of gold or disputes: the key of cached reports.

    Reading one row is all the reports page needs to know whether its cached
    numbers still hold, however large the project.
    """

    project = models.OneToOneField(
        "annotator.Project", on_delete=models.CASCADE, primary_key=True, related_name="gold_version"
    )
    version = models.PositiveBigIntegerField(default=0)
    updated_at = models.DateTimeField(auto_now=True)

    def __str__(self):
        return f"{self.project_id}: gold version {self.version}"
