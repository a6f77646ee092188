"""Auto-labelling: endpoints, prompt versions, contrastive examples, jobs, samples, predictions."""

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import models

from annotator.leases import LeasedJob
from annotator.models import Project, ProtocolVersion, Sentence, Turn
from annotator.projects.protocols import protocol_for
from annotator.storage import learned_judge_path, private_storage

from autolabel.labelling import prompting
from autolabel.labelling.stages import label_field_problems


class LLMProfile(models.Model):
    """An OpenAI-compatible endpoint. The API key is read from an environment variable, never stored.

    Site-wide profiles (no project) are the admin's; a project's leads keep their own on the project's
    endpoints page, within the hosts and keys the site allows (autolabel/endpoints/policy.py).
    """

    name = models.CharField(max_length=100)
    project = models.ForeignKey(
        Project, null=True, blank=True, on_delete=models.CASCADE, related_name="llm_endpoints",
        help_text="The project whose leads keep this endpoint (blank: a site-wide profile, kept in the admin).",
    )
    follows_environment = models.BooleanField(
        default=False,
        help_text="The site's default endpoint: requests go to OPENAI_BASE_URL as it is when a job runs "
                  "(the base URL below is then not used).",
    )
    base_url = models.URLField(max_length=500, help_text="e.g. https://api.openai.com/v1 or http://127.0.0.1:8765/v1")
    default_model = models.CharField(max_length=200, default="baseline-lexical")
    api_key_env = models.CharField(
        max_length=100, blank=True, default="OPENAI_API_KEY",
        help_text="Name of the environment variable holding the API key (the key itself is never stored).",
    )
    supports_n = models.BooleanField(default=True, help_text="The endpoint returns several choices for one request (n).")
    supports_batch = models.BooleanField(default=False, help_text="The endpoint offers the files and batches API.")
    concurrency = models.PositiveSmallIntegerField(default=16, help_text="At most this many requests in flight per job.")
    timeout_seconds = models.FloatField(default=60)
    max_retries = models.PositiveSmallIntegerField(default=5)
    temperature = models.FloatField(default=1.0)
    max_tokens = models.PositiveIntegerField(default=1024)
    input_price_per_million = models.DecimalField(max_digits=10, decimal_places=4, default=0)
    output_price_per_million = models.DecimalField(max_digits=10, decimal_places=4, default=0)
    latency_seconds = models.FloatField(
        null=True, blank=True, help_text="Measured: the last test's request time (the estimate of a job's time uses it).")

    class Meta:
        verbose_name = "LLM endpoint profile"
        constraints = [
            models.UniqueConstraint(fields=["name"], condition=models.Q(project__isnull=True),
                                    name="llm_profile_site_name_unique"),
            models.UniqueConstraint(fields=["project", "name"], name="llm_profile_project_name_unique"),
        ]

    def __str__(self):
        return self.name

    def endpoint_url(self) -> str:
        """Where requests go: the profile's base URL, or the environment's OPENAI_BASE_URL read now."""
        return settings.OPENAI_BASE_URL if self.follows_environment else self.base_url

    def clean(self):
        from autolabel.jobs.llm import api_key_env_refusal

        if self.api_key_env and not self.api_key_env.replace("_", "").isalnum():
            raise ValidationError({"api_key_env": "An environment variable name: letters, digits and underscores."})
        refusal = api_key_env_refusal(self.api_key_env)
        if refusal:
            raise ValidationError({"api_key_env": refusal})


class PromptVersion(models.Model):
    """The wording of both stages for one project; versions are never edited once used."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="prompt_versions")
    version = models.PositiveIntegerField()
    stage1_template = models.TextField(default=prompting.DEFAULT_STAGE1_TEMPLATE)
    stage2_template = models.TextField(default=prompting.DEFAULT_STAGE2_TEMPLATE)
    notes = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["project", "-version"]
        constraints = [models.UniqueConstraint(fields=["project", "version"], name="prompt_version_unique")]

    def __str__(self):
        return f"{self.project.slug} prompt v{self.version}"


class ContrastiveExample(models.Model):
    """A gold sentence shown in the prompt with a wrong annotation beside the right one."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="contrastive_examples")
    sentence = models.ForeignKey(Sentence, on_delete=models.CASCADE, related_name="contrastive_examples")
    # Labels of the project's protocol: checked against it in clean() (admin and forms), not by choices.
    wrong_label = models.CharField(max_length=20, help_text="A label of the project's protocol.")
    right_label = models.CharField(max_length=20, help_text="A label of the project's protocol.")
    explanation = models.TextField(blank=True, help_text="Shown to the model after the right annotation.")
    active = models.BooleanField(default=True)
    position = models.PositiveIntegerField(default=0)
    source_job = models.ForeignKey(
        "AutoLabelJob", null=True, blank=True, on_delete=models.SET_NULL, related_name="+",
        help_text="The job whose mistake suggested this example.",
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["project", "position", "id"]
        constraints = [models.UniqueConstraint(fields=["project", "sentence"], name="one_example_per_sentence")]

    def __str__(self):
        return f"{self.sentence.text[:60]} ({self.wrong_label} -> {self.right_label})"

    def clean(self):
        if self.project_id is None:
            return
        problems = label_field_problems(protocol_for(self.project), {
            "wrong_label": self.wrong_label, "right_label": self.right_label})
        if problems:
            raise ValidationError(problems)


class LLMJob(models.Model):
    """What the two kinds of worker-run LLM job share: their status, progress and call counters, who
    started them and when. Abstract: each kind keeps its own table."""

    class Status(models.TextChoices):
        QUEUED = "queued", "Queued"
        RUNNING = "running", "Running"
        DONE = "done", "Done"
        FAILED = "failed", "Failed"
        CANCELLED = "cancelled", "Cancelled"

    FINISHED = (Status.DONE, Status.FAILED, Status.CANCELLED)

    status = models.CharField(max_length=20, choices=Status.choices, default=Status.QUEUED)
    cancel_requested = models.BooleanField(default=False)
    error = models.TextField(blank=True)
    total_turns = models.PositiveIntegerField(default=0)
    done_turns = models.PositiveIntegerField(default=0)
    requests = models.PositiveIntegerField(default=0)
    retries = models.PositiveIntegerField(default=0)
    prompt_tokens = models.PositiveBigIntegerField(default=0)
    completion_tokens = models.PositiveBigIntegerField(default=0)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        abstract = True
        ordering = ["-created_at", "-id"]

    @property
    def is_finished(self):
        return self.status in self.FINISHED


class LearnedJudge(LeasedJob):
    """A classifier trained on a project's gold (autolabel/learned), in one protocol version: its figures
    (cross-validated, learning curve) and its fitted model in the private file storage. Trained by a worker under
    a lease (``annotator.leases``); one at a time per project, by a constraint (two requests at once make one)."""

    class Status(models.TextChoices):
        QUEUED = "queued", "Queued"
        RUNNING = "running", "Training"
        DONE = "done", "Done"
        FAILED = "failed", "Failed"

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="learned_judges")
    # The protocol version it learned (null: the built-in default): it is refused for any other.
    protocol_version = models.ForeignKey(ProtocolVersion, null=True, blank=True, on_delete=models.PROTECT,
                                         related_name="learned_judges")
    status = models.CharField(max_length=20, choices=Status.choices, default=Status.QUEUED)
    error = models.TextField(blank=True)
    gold_version = models.PositiveBigIntegerField(null=True, blank=True,
                                                  help_text="The project's gold version it was trained on.")
    gold_sentences = models.PositiveIntegerField(default=0, help_text="Gold sentences it learned from.")
    votes_job = models.ForeignKey("AutoLabelJob", null=True, blank=True, on_delete=models.SET_NULL, related_name="+",
                                  help_text="The finished pre-labelling job whose votes it read.")
    options = models.JSONField(default=dict, blank=True)
    figures = models.JSONField(default=dict, blank=True, help_text="Cross-validated figures and the learning curve.")
    model_file = models.FileField(storage=private_storage, upload_to=learned_judge_path, blank=True)
    library_version = models.CharField(max_length=50, blank=True, help_text="scikit-learn's version that fitted it.")
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    IN_PROGRESS = (Status.QUEUED, Status.RUNNING)

    class Meta:
        ordering = ["-created_at", "-id"]
        constraints = [models.UniqueConstraint(fields=["project"], condition=models.Q(status__in=["queued", "running"]),
                                               name="one_judge_training_per_project")]

    def __str__(self):
        return f"Learned judge {self.pk} on {self.project.slug} ({self.status})"

    @property
    def is_finished(self):
        return self.status in (self.Status.DONE, self.Status.FAILED)


class AutoLabelJob(LLMJob):
    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="autolabel_jobs")
    # Null for a learned judge's job (no endpoint is called).
    profile = models.ForeignKey(LLMProfile, null=True, blank=True, on_delete=models.PROTECT, related_name="jobs")
    learned_judge = models.ForeignKey(LearnedJudge, null=True, blank=True, on_delete=models.PROTECT,
                                      related_name="jobs", help_text="Set when the learned judge labels, not an LLM.")
    prompt_version = models.ForeignKey(PromptVersion, on_delete=models.PROTECT, related_name="jobs")
    # The protocol the job labels with: the project's version when the job was created (null: the built-in
    # default). Its prompts, replies and labels all follow it, whatever version the project moves on to.
    protocol_version = models.ForeignKey(ProtocolVersion, null=True, blank=True, on_delete=models.PROTECT,
                                         related_name="autolabel_jobs")
    model = models.CharField(max_length=200)
    samples = models.PositiveSmallIntegerField(default=5)
    threshold = models.PositiveSmallIntegerField(default=3)
    use_n = models.BooleanField(default=True, help_text="Ask for all samples in one request (n) when the endpoint can.")
    batch_mode = models.BooleanField(default=False, help_text="Send the requests through the Batch API (half price, slower).")
    # Parameters as sent, recorded with the job (temperature, max_tokens, concurrency, examples used...).
    parameters = models.JSONField(default=dict, blank=True)
    faults = models.PositiveIntegerField(default=0, help_text="Requests that failed after every retry.")
    abstentions = models.PositiveIntegerField(default=0, help_text="Sentence votes lost to faults or unreadable replies.")
    problems = models.JSONField(default=dict, blank=True, help_text="Reply problems by kind (missing marker, unknown tag...).")
    cost = models.DecimalField(max_digits=12, decimal_places=6, default=0)
    first_fault = models.TextField(blank=True, help_text="The first failed request's reason (endpoint and error).")
    # What the estimator said when the job was created (labelling/estimate.py), shown beside what the API reported.
    estimate = models.JSONField(default=dict, blank=True)
    # Which worker runs the job, until when; a worker that dies stops renewing and another adopts the job.
    lease_owner = models.CharField(max_length=200, blank=True)
    lease_until = models.DateTimeField(null=True, blank=True)
    batch_state = models.JSONField(default=dict, blank=True, help_text="Batch mode: current batch id, status and counts.")

    class Meta(LLMJob.Meta):
        verbose_name = "auto-label job"

    def __str__(self):
        return f"Job {self.pk} on {self.project.slug} ({self.model}, {self.status})"

    @property
    def labelled_by(self):
        """What labelled the job, as its pages name it: a learned judge has no prompt, samples or threshold of an
        LLM's (its votes are shared from probabilities), so naming them would describe a run that did not happen."""
        if self.learned_judge_id:
            return f"learned judge #{self.learned_judge_id}"
        return f"{self.model} · prompt v{self.prompt_version.version} · threshold {self.threshold} of {self.samples}"

    @property
    def percent(self):
        return round(100 * self.done_turns / self.total_turns, 1) if self.total_turns else 0.0

    @property
    def state(self):
        """Done, done with problems, failed, waiting for a worker...: what the page and the API say."""
        from django.utils import timezone

        from autolabel.jobs.states import job_state

        return job_state(status=self.status, faults=self.faults, first_fault=self.first_fault, error=self.error,
                         leased=bool(self.lease_owner), created_at=self.created_at or timezone.now(),
                         now=timezone.now(), cancel_requested=self.cancel_requested)


class JobTurn(models.Model):
    """A turn in a job's scope; ``done`` once its predictions are written."""

    job = models.ForeignKey(AutoLabelJob, on_delete=models.CASCADE, related_name="job_turns")
    turn = models.ForeignKey(Turn, on_delete=models.CASCADE, related_name="+")
    done = models.BooleanField(default=False)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["job", "turn"], name="job_turn_unique")]
        indexes = [models.Index(fields=["job", "done", "id"])]


class SampleReply(models.Model):
    """One sample's reply for one stage of one turn: the raw text and the per-sentence votes."""

    job = models.ForeignKey(AutoLabelJob, on_delete=models.CASCADE, related_name="sample_replies")
    turn = models.ForeignKey(Turn, on_delete=models.CASCADE, related_name="+")
    stage = models.PositiveSmallIntegerField()
    sample_index = models.PositiveSmallIntegerField()
    raw_reply = models.TextField(blank=True)
    # sentence number (1-based, as in the prompt) -> tag text, for the sentences the reply labelled.
    votes = models.JSONField(default=dict, blank=True)
    problems = models.JSONField(default=dict, blank=True)
    error = models.TextField(blank=True, help_text="Why the request failed after its retries.")
    prompt_tokens = models.PositiveIntegerField(default=0)
    completion_tokens = models.PositiveIntegerField(default=0)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["job", "turn", "stage", "sample_index"]
        constraints = [
            models.UniqueConstraint(fields=["job", "turn", "stage", "sample_index"], name="sample_reply_unique")
        ]


class Prediction(models.Model):
    """The vote's result for one sentence in one job."""

    job = models.ForeignKey(AutoLabelJob, on_delete=models.CASCADE, related_name="predictions")
    sentence = models.ForeignKey(Sentence, on_delete=models.CASCADE, related_name="predictions")
    label = models.CharField(max_length=20, blank=True, help_text="A label of the job's protocol (blank: none agreed).")
    hallucinated = models.BooleanField(default=False)
    hallucinated_votes = models.PositiveSmallIntegerField(default=0)
    abstentions = models.PositiveSmallIntegerField(default=0)
    stage1_kind = models.CharField(max_length=20, blank=True,
                                   help_text="The family of the label (CogniBench: factual / cognitive), as the agreeing samples said.")
    label_votes = models.JSONField(default=dict, blank=True)
    # Every sample's reading, so the job can be re-scored at any threshold.
    sample_votes = models.JSONField(default=list, blank=True)
    # The learned judge's probability of its label (an LLM job's confidence is its samples' agreement).
    confidence = models.FloatField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["job", "sentence__index"]
        constraints = [models.UniqueConstraint(fields=["job", "sentence"], name="prediction_unique")]

    def __str__(self):
        return f"{self.sentence_id}: {self.label or '-'}"


class ExtractionJob(LLMJob):
    """An LLM job of the finer views, run by a worker: claim-triplet extraction (RefChecker's extractor
    step) over a project's turns, or severity ratings (HalluDetect) of the sentences a pre-labelling job
    judged hallucinated."""

    class Kind(models.TextChoices):
        TRIPLETS = "triplets", "Extract claim triplets"
        SEVERITY = "severity", "Rate the severity of predicted hallucinations"

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="extraction_jobs")
    kind = models.CharField(max_length=20, choices=Kind.choices, default=Kind.TRIPLETS)
    source_job = models.ForeignKey(
        AutoLabelJob, null=True, blank=True, on_delete=models.CASCADE, related_name="severity_jobs",
        help_text="Severity: the pre-labelling job whose hallucinated predictions are rated.",
    )
    profile = models.ForeignKey(LLMProfile, on_delete=models.PROTECT, related_name="extraction_jobs")
    model = models.CharField(max_length=200, blank=True, help_text="Model name (default: the profile's).")
    only_missing = models.BooleanField(
        default=True, help_text="Skip turns that already have triplets (imported, added by hand or extracted before)."
    )
    triplets_created = models.PositiveIntegerField(default=0, help_text="Triplets stored (severity jobs: ratings stored).")
    faults = models.PositiveIntegerField(default=0, help_text="Turns whose request failed after every retry.")
    problems = models.JSONField(default=dict, blank=True, help_text="Reply lines not in the format, by kind.")

    class Meta(LLMJob.Meta):
        verbose_name = "triplet extraction job"

    def __str__(self):
        return f"Extraction {self.pk} on {self.project.slug} ({self.model}, {self.status})"


class SeverityPrediction(models.Model):
    """The pre-labeler's severity 1-5 and justification for a sentence it predicted hallucinated."""

    job = models.ForeignKey(ExtractionJob, on_delete=models.CASCADE, related_name="severity_predictions")
    sentence = models.ForeignKey(Sentence, on_delete=models.CASCADE, related_name="severity_predictions")
    severity = models.PositiveSmallIntegerField()
    justification = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["job", "sentence_id"]
        constraints = [models.UniqueConstraint(fields=["job", "sentence"], name="severity_prediction_unique")]


class EndpointTest(models.Model):
    """One probe of an endpoint (the Test button): a minimal request run by a worker, its answer or error."""

    class Status(models.TextChoices):
        QUEUED = "queued", "Waiting for a worker"
        DONE = "done", "Answered"
        FAILED = "failed", "Failed"

    profile = models.ForeignKey(LLMProfile, on_delete=models.CASCADE, related_name="tests")
    status = models.CharField(max_length=20, choices=Status.choices, default=Status.QUEUED)
    endpoint = models.CharField(max_length=500, blank=True, help_text="The base URL the probe was sent to.")
    reply = models.TextField(blank=True)
    models_listed = models.JSONField(default=list, blank=True)
    latency_seconds = models.FloatField(null=True, blank=True)
    error = models.TextField(blank=True)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    created_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]

    @property
    def is_finished(self):
        return self.status != self.Status.QUEUED
