"""Records about the units themselves: an annotator's flag that a unit is mis-segmented, and a lead's
split or merge of a turn's units (the audit of every segmentation change)."""

from django.conf import settings
from django.db import models

from annotator.domain.vocabulary import UnitFlagKind


class UnitFlag(models.Model):
    """An annotator's report that a unit is not one sentence to label ("two sentences", "not a sentence"...).

    The unit's index and text are copied: a split or merge replaces the unit, and the flag (with what it
    was about) stays for the audit.
    """

    class Status(models.TextChoices):
        OPEN = "open", "Open"
        RESOLVED = "resolved", "Resolved (split or merged)"
        DISMISSED = "dismissed", "Dismissed"

    turn = models.ForeignKey("annotator.Turn", on_delete=models.CASCADE, related_name="unit_flags")
    sentence = models.ForeignKey("annotator.Sentence", null=True, blank=True, on_delete=models.SET_NULL, related_name="flags")
    sentence_index = models.PositiveIntegerField()
    sentence_text = models.TextField()
    kind = models.CharField(max_length=20, choices=UnitFlagKind.choices)
    note = models.TextField(blank=True)
    flagged_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    status = models.CharField(max_length=20, choices=Status.choices, default=Status.OPEN)
    resolved_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    resolved_at = models.DateTimeField(null=True, blank=True)
    resolution = models.TextField(blank=True, help_text="What the lead did about it.")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["turn_id", "sentence_index", "id"]
        constraints = [
            models.UniqueConstraint(
                fields=["sentence", "flagged_by"], condition=models.Q(status="open"), name="one_open_flag_per_unit"
            )
        ]
        indexes = [models.Index(fields=["turn", "status"])]


class SegmentationChange(models.Model):
    """A lead's split or merge of a turn's units: the units before and after, and what it reset."""

    class Action(models.TextChoices):
        SPLIT = "split", "Split a unit"
        MERGE = "merge", "Merge two units"

    turn = models.ForeignKey("annotator.Turn", on_delete=models.CASCADE, related_name="segmentation_changes")
    action = models.CharField(max_length=20, choices=Action.choices)
    # [{"index", "start", "end", "text"}] of the turn's units before and after the change.
    before = models.JSONField(default=list)
    after = models.JSONField(default=list)
    # What the change removed when the lead chose to reset the turn's annotations: per removed record
    # (annotation, gold, prediction...) its owner, unit index, label and path, so nothing is lost silently.
    reset = models.JSONField(default=list, blank=True)
    reason = models.TextField(blank=True)
    actor = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["created_at", "id"]
