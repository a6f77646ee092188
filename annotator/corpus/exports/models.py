from django.conf import settings
from django.db import models

from annotator.storage import export_file_path, private_storage


class ExportJob(models.Model):
    """A gold export written to a file by a Celery worker, for projects too large to stream comfortably."""

    class Format(models.TextChoices):
        JSONL = "jsonl", "Gold JSONL"
        COGNIBENCH = "cognibench", "CogniBench labels.json"
        CSV = "csv", "Gold CSV"

    class Status(models.TextChoices):
        PENDING = "pending", "Pending"
        RUNNING = "running", "Running"
        DONE = "done", "Done"
        FAILED = "failed", "Failed"

    project = models.ForeignKey("annotator.Project", on_delete=models.CASCADE, related_name="export_jobs")
    format = models.CharField(max_length=20, choices=Format.choices)
    status = models.CharField(max_length=20, choices=Status.choices, default=Status.PENDING)
    progress = models.PositiveIntegerField(default=0, help_text="Turns written.")
    total = models.PositiveIntegerField(default=0, help_text="Turns in the project when the job started.")
    file = models.FileField(upload_to=export_file_path, storage=private_storage, blank=True, max_length=300)
    error = models.TextField(blank=True)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    created_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    # The worker running it and until when it is presumed alive (annotator/leases.py); how many workers took it up.
    lease_owner = models.CharField(max_length=200, blank=True)
    lease_until = models.DateTimeField(null=True, blank=True)
    attempts = models.PositiveSmallIntegerField(
        default=0, help_text="Workers that took it up (one, unless a worker died under it).")

    class Meta:
        ordering = ["-created_at"]

    def __str__(self):
        return f"{self.get_format_display()} of {self.project} ({self.status})"
