from django.conf import settings
from django.db import models

from ..storage import import_upload_path, private_storage
from ..domain.languages import word_count
from ..domain.vocabulary import TripletLabel, TripletSource


class ImportBatch(models.Model):
    """One imported file: the unit of 'per batch' reports and of import jobs."""

    class Kind(models.TextChoices):
        COGNIBENCH = "cognibench", "CogniBench"
        REFCHECKER = "refchecker", "RefChecker"
        JSONL = "jsonl", "Project JSONL"

    class Status(models.TextChoices):
        PENDING = "pending", "Pending"
        RUNNING = "running", "Running"
        DONE = "done", "Done"
        FAILED = "failed", "Failed"

    project = models.ForeignKey("annotator.Project", on_delete=models.CASCADE, related_name="batches")
    kind = models.CharField(max_length=20, choices=Kind.choices)
    filename = models.CharField(max_length=500)
    sha256 = models.CharField(max_length=64, blank=True)
    status = models.CharField(max_length=20, choices=Status.choices, default=Status.PENDING)
    progress = models.PositiveIntegerField(default=0)
    total = models.PositiveIntegerField(default=0)
    summary = models.JSONField(default=dict, blank=True)
    error = models.TextField(blank=True)
    upload = models.FileField(upload_to=import_upload_path, storage=private_storage, blank=True, max_length=300)
    # CogniBench comes as two files: dialogues.json (upload) and labels.json (this one).
    second_upload = models.FileField(
        upload_to=import_upload_path, storage=private_storage, blank=True, max_length=300,
        help_text="CogniBench labels.json (optional).",
    )
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
        verbose_name_plural = "import batches"

    def __str__(self):
        return f"{self.get_kind_display()} {self.filename}"


class Dialogue(models.Model):
    project = models.ForeignKey("annotator.Project", on_delete=models.CASCADE, related_name="dialogues")
    batch = models.ForeignKey(ImportBatch, null=True, blank=True, on_delete=models.SET_NULL, related_name="dialogues")
    external_id = models.CharField(max_length=200)
    topic = models.CharField(max_length=200, blank=True)
    language = models.CharField(max_length=50, blank=True)
    generator_model = models.CharField(max_length=200, blank=True)
    reference = models.TextField(blank=True, help_text="The context document the LLM was given.")
    metadata = models.JSONField(default=dict, blank=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["project", "external_id"], name="dialogue_external_id")]
        indexes = [models.Index(fields=["project", "topic"]), models.Index(fields=["project", "generator_model"])]

    def __str__(self):
        return self.external_id


class Turn(models.Model):
    """One assistant answer to judge. ``history`` holds the earlier turns as the source gave them."""

    # No index of its own: the unique (dialogue, index) constraint's index serves lookups by dialogue.
    dialogue = models.ForeignKey(Dialogue, on_delete=models.CASCADE, related_name="turns", db_index=False)
    index = models.PositiveIntegerField()
    external_id = models.CharField(max_length=200, blank=True)
    user_message = models.TextField(blank=True)
    assistant_response = models.TextField()
    history = models.JSONField(default=list, blank=True, help_text='[{"role": "user"|"assistant", "text": ...}]')
    metadata = models.JSONField(default=dict, blank=True)
    is_qualification = models.BooleanField(default=False)
    # How many live (not released) work assignments the turn has; kept by
    # annotator.work.assignment in the same transaction as the assignments,
    # so that "next item" finds an open slot without counting rows per turn.
    slots_taken = models.PositiveSmallIntegerField(default=0, editable=False)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["dialogue_id", "index"]
        constraints = [models.UniqueConstraint(fields=["dialogue", "index"], name="turn_index")]
        indexes = [
            # "Next item" walks work turns in id order looking for an open slot; this partial
            # index holds only turns with fewer than 2 slots (the default overlap), so turns
            # already fully assigned are not read at all.
            models.Index(
                fields=["id"], name="turn_open_slots",
                condition=models.Q(slots_taken__lt=2, is_qualification=False),
            ),
            # The qualification set of a project is a handful of turns, looked up on every "next item":
            # without this the lookup reads every turn of the project.
            models.Index(fields=["dialogue"], name="turn_qualification", condition=models.Q(is_qualification=True)),
        ]

    def __str__(self):
        # Neutral: the record id finds the source's public labels, so a page that names a turn without asking
        # who reads it (annotator.access.turn_name) must not show it.
        return f"Turn {self.pk}"


class Sentence(models.Model):
    # No index of its own: the unique (turn, index) constraint's index serves lookups by turn.
    turn = models.ForeignKey(Turn, on_delete=models.CASCADE, related_name="sentences", db_index=False)
    index = models.PositiveIntegerField()
    text = models.TextField()
    start = models.PositiveIntegerField(help_text="Character offset into the assistant response.")
    end = models.PositiveIntegerField()

    class Meta:
        ordering = ["turn_id", "index"]
        constraints = [models.UniqueConstraint(fields=["turn", "index"], name="sentence_index")]

    def __str__(self):
        return self.text[:80]

    @property
    def word_count(self):
        return word_count(self.text)


class ClaimTriplet(models.Model):
    """A (head, relation, tail) claim of a response, RefChecker style."""

    turn = models.ForeignKey(Turn, on_delete=models.CASCADE, related_name="triplets")
    sentence = models.ForeignKey(Sentence, null=True, blank=True, on_delete=models.CASCADE, related_name="triplets")
    index = models.PositiveIntegerField(default=0)
    head = models.TextField()
    relation = models.TextField()
    tail = models.TextField()
    source = models.CharField(max_length=20, choices=TripletSource.choices, default=TripletSource.MANUAL)
    reference_label = models.CharField(
        max_length=20, choices=TripletLabel.choices, blank=True, help_text="Human label that came with an import."
    )
    metadata = models.JSONField(default=dict, blank=True)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)

    class Meta:
        ordering = ["turn_id", "index", "id"]

    def __str__(self):
        return f"({self.head}, {self.relation}, {self.tail})"
