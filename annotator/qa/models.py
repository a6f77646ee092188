from django.conf import settings
from django.db import models

from ..domain.protocol.document import COGNIBENCH


class Question(models.Model):
    """A real-time question an annotator asks about a sentence while working."""

    class Status(models.TextChoices):
        OPEN = "open", "Open"
        ANSWERED = "answered", "Answered"
        CLOSED = "closed", "Closed"

    project = models.ForeignKey("annotator.Project", on_delete=models.CASCADE, related_name="questions")
    turn = models.ForeignKey("annotator.Turn", on_delete=models.CASCADE, related_name="questions")
    sentence = models.ForeignKey("annotator.Sentence", null=True, blank=True, on_delete=models.CASCADE, related_name="questions")
    asked_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="questions")
    path = models.JSONField(default=dict, blank=True, help_text="The decision path when the question was asked.")
    step = models.CharField(max_length=20, blank=True, help_text="A step of the project's protocol.")
    status = models.CharField(max_length=20, choices=Status.choices, default=Status.OPEN)
    unread_by_asker = models.BooleanField(default=False)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-created_at"]

    def get_step_display(self):
        return COGNIBENCH.step_question(self.step)



class QuestionMessage(models.Model):
    question = models.ForeignKey(Question, on_delete=models.CASCADE, related_name="messages")
    author = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    body = models.TextField()
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["created_at", "id"]


class Feedback(models.Model):
    """Post-hoc feedback from a lead on one submitted sentence annotation."""

    project = models.ForeignKey("annotator.Project", on_delete=models.CASCADE, related_name="feedback")
    annotation = models.ForeignKey("annotator.SentenceAnnotation", on_delete=models.CASCADE, related_name="feedback")
    lead = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    expected_label = models.CharField(max_length=20, blank=True, help_text="A label of the project's protocol.")
    comment = models.TextField()
    created_at = models.DateTimeField(auto_now_add=True)
    acknowledged_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]
        verbose_name_plural = "feedback"

    def get_expected_label_display(self):
        return COGNIBENCH.label_name(self.expected_label)



class QualificationResult(models.Model):
    """One attempt of an annotator at the project's qualification set."""

    project = models.ForeignKey("annotator.Project", on_delete=models.CASCADE, related_name="qualification_results")
    annotator = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    attempt = models.PositiveSmallIntegerField(default=1)
    correct = models.PositiveIntegerField(default=0)
    total = models.PositiveIntegerField(default=0)
    passed = models.BooleanField(default=False)
    retry_allowed = models.BooleanField(default=False)
    # Per sentence of the attempt: the annotator's label and path, the gold label,
    # path and reason at scoring time, and the step where the paths diverged. Kept
    # so the score page stays true after gold changes or a retry resets the work.
    details = models.JSONField(default=list, blank=True)
    retry_allowed_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at"]
        constraints = [
            models.UniqueConstraint(fields=["project", "annotator", "attempt"], name="one_result_per_attempt")
        ]

    @property
    def score(self):
        return self.correct / self.total if self.total else 0.0
