"""The lead's console: a new project, its settings (each saying what it changes), its people and invite links."""

from django import forms
from django.contrib.auth.forms import UserCreationForm
from django.core.validators import MaxValueValidator, MinValueValidator
from django.urls import reverse
from django.utils.html import format_html

from ..domain.protocol.document import load_shipped
from ..domain.protocol.groups import reading
from ..domain.protocol.wording import evidence_wording
from ..domain.qualification import MAX_AUTO_RETRIES
from ..domain.vocabulary import ProtocolMode, Role
from ..models import Project
from .forms import ProtocolForm, shipped_choices
from .protocols import protocol_for
from .services import INVITE_DAYS, INVITE_ROLES

# The model's help text names CogniBench's answers (it stays: changing it is a migration); pages and the API say this.
REQUIRE_EVIDENCE_HELP = "Answers the project's protocol marks as needing evidence need at least one evidence span."

# What each setting changes, said where the lead changes it (the model's help texts say what it is).
EXPLANATIONS = {
    "name": "Shown to everyone in the project; the address of its pages stays the same.",
    "guidelines": "Markdown the annotators read beside the turn (Help, key ?). Changing them affects what "
                  "annotators read from now on; labels already given stay.",
    "overlap": "How many different annotators label each turn; gold comes from their agreement, so it takes at "
               "least 2. Raising it opens one more slot on every turn, also on turns already compared: when the new "
               "annotator submits, a sentence whose annotators no longer all agree is decided again (adjudicated "
               "gold stays). Lowering it hands out fewer new slots; slots already given stay.",
    "protocol_mode": "How annotators reach a label: the protocol's questions one at a time, or one choice among "
                     "its labels. Labels already given keep the path they were given with; the next sentences "
                     "are asked the new way.",
    "require_evidence": "If on, an annotator cannot finish a sentence answered {evidence} without marking at "
                        "least one supporting span of the reference.",
    "show_prelabels": "If on, annotators see the LLM's pre-label of each sentence while they judge it. Off by "
                      "default: seeing it anchors them, and the agreement you measure is then partly the model's.",
    "adjudicators_may_annotate": "If on, adjudicators (and leads) may also take annotation slots. Whoever holds a "
                                 "slot on a turn is blind on it until they submit, and never adjudicates it.",
    "imported_gold": "Gold that came with the imported data: final (the annotators' agreement keeps it; a "
                     "disagreement still goes to adjudication, which may replace it) or only a reference (the "
                     "annotators' agreement or an adjudication replaces it). Applies to turns compared from now on.",
    "adjudication_order": "The order in which the adjudication queue lists disputed turns.",
    "drawn_turn_review": "Turns drawn to check the pre-labeler: labelled like any turn (two annotators, then "
                         "adjudication) or by one annotator whose labels become gold (cheaper, less certain).",
    "qualification_pass_mark": "The share of qualification sentences an annotator must label like the gold "
                               "(0 to 1) before they get real turns. Changing it applies to attempts scored from now "
                               "on.",
    "qualification_auto_retries": "How many failed attempts open a new attempt by themselves; after that (or with "
                                  "0) an annotator waits until a lead allows a retry on the qualification page.",
    "enable_triplets": "RefChecker's view: annotators also label the claim triplets of each answer.",
    "enable_severity": "HalluDetect's view: annotators also give each hallucinated sentence a severity (1-5).",
    "severity_threshold": "Exports and reports can keep only hallucinations of at least this severity.",
    "enable_error_types": "Face4RAG's view: annotators also name the type of each error, from the list below.",
    "error_types": "One per line; the choices annotators see when error types are on.",
}

SETTINGS_GROUPS = [
    ("Who labels", ["overlap", "adjudicators_may_annotate"]),
    ("How they label", ["protocol_mode", "require_evidence", "show_prelabels", "guidelines"]),
    ("Gold and adjudication", ["imported_gold", "adjudication_order", "drawn_turn_review"]),
    ("Qualification", ["qualification_pass_mark", "qualification_auto_retries"]),
    ("Optional views", ["enable_triplets", "enable_severity", "severity_threshold", "enable_error_types",
                        "error_types"]),
    ("Name", ["name"]),
]


class ErrorTypesField(forms.CharField):
    """The error types, one per line (stored as a list)."""

    widget = forms.Textarea(attrs={"rows": 4})

    def prepare_value(self, value):
        return "\n".join(value) if isinstance(value, list) else value

    def has_changed(self, initial, data):
        lines = [line.strip() for line in (data or "").splitlines() if line.strip()]
        return list(initial or []) != lines

    def clean(self, value):
        text = super().clean(value) or ""  # the text's own checks first: its length, no NUL
        types = [line.strip() for line in text.splitlines() if line.strip()]
        if any(len(name) > 100 for name in types):
            raise forms.ValidationError("An error type has at most 100 characters.")
        return types


class ProjectSettingsForm(forms.ModelForm):
    """Every setting a lead may change; ``project_update_settings`` writes the ones that changed."""

    error_types = ErrorTypesField(required=False, max_length=5000)
    guidelines = forms.CharField(required=False, max_length=50_000, widget=forms.Textarea(attrs={"rows": 5}),
                                 help_text=Project._meta.get_field("guidelines").help_text)

    class Meta:
        model = Project
        fields = [name for _, names in SETTINGS_GROUPS for name in names]


    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        limits = {"overlap": (1, 10), "qualification_pass_mark": (0, 1),
                  "qualification_auto_retries": (0, MAX_AUTO_RETRIES), "severity_threshold": (1, 5)}
        for name, (low, high) in limits.items():
            field = self.fields[name]
            field.min_value, field.max_value = low, high
            field.widget.attrs.update(min=low, max=high)
            field.validators += [MinValueValidator(low), MaxValueValidator(high)]
        self.fields["qualification_pass_mark"].widget.attrs["step"] = "0.01"
        self.fields["protocol_mode"].choices = ProtocolMode.choices  # the model keeps the words it was migrated with
        evidence = evidence_wording(reading(protocol_for(self.instance))) if self.instance.pk else ""
        self.fields["require_evidence"].help_text = REQUIRE_EVIDENCE_HELP
        for name, field in self.fields.items():
            field.explanation = EXPLANATIONS.get(name, "")
        self.fields["require_evidence"].explanation = EXPLANATIONS["require_evidence"].format(
            evidence=evidence or "with an answer its protocol marks as needing evidence")

    def _post_clean(self):
        # The service validates and writes (one write path); the form only reads the values.
        pass

    def groups(self):
        return [(title, [self[name] for name in names]) for title, names in SETTINGS_GROUPS]

    def changes(self) -> dict:
        return {name: self.cleaned_data[name] for name in self.changed_data}


class ProjectCreateForm(forms.Form):
    name = forms.CharField(max_length=200, label="Name")
    slug = forms.SlugField(max_length=44, required=False, label="Address (optional)",
                           help_text="Letters, digits and hyphens, used in the project's links; made from the name "
                                     "if left empty.")
    protocol_mode = forms.ChoiceField(choices=ProtocolMode.choices, initial=ProtocolMode.SEQUENTIAL,
                                      label="How annotators reach a label", help_text=EXPLANATIONS["protocol_mode"])
    overlap = forms.IntegerField(min_value=1, max_value=10, initial=2, label="Annotators per turn",
                                 help_text=EXPLANATIONS["overlap"])
    protocol = forms.ChoiceField(label="Protocol", initial="cognibench", required=False,
                                 help_text="The questions annotators answer about each sentence. A shipped one, or "
                                           "your own document (JSON or YAML); you can preview and change it on the "
                                           "project's Protocol page until something is labelled.")
    protocol_file = forms.FileField(required=False, label="Your protocol document (when “a file” is chosen)")
    default_language = forms.CharField(
        required=False, max_length=50, label="Language of the dialogues",
        validators=Project._meta.get_field("default_language").validators)

    FILE = "file"

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["protocol"].choices = shipped_choices() + [(self.FILE, "A file I upload")]
        # The model's help text names docs/languages.md, a path a lead on a server does not have (changing it is a
        # migration): the form links the page the site serves from that file.
        self.fields["default_language"].help_text = format_html(
            'An ISO 639-1 code such as zh, or the language\'s English name such as chinese; empty: English. Used for '
            'dialogues whose file names no language: it chooses how imported responses are cut into sentences '
            '(<a href="{}">Languages</a>: the codes and names accepted, and which segmenter each language gets).',
            reverse("languages_help"))

    def clean(self):
        """``protocol_document``: the chosen document, read as the protocol page reads one (the same form, so the
        same limits and refusals), or a shipped one."""
        cleaned = super().clean()
        choice = cleaned.get("protocol")
        if choice == self.FILE:
            upload = cleaned.get("protocol_file")
            if not upload:
                self.add_error("protocol_file", "Choose the file of your protocol, or a shipped protocol.")
                return cleaned
            reading = ProtocolForm(data={"source": ProtocolForm.EDITED}, files={"file": upload})
            if not reading.is_valid():
                for errors in reading.errors.values():
                    self.add_error("protocol_file", errors)
                return cleaned
            cleaned["protocol_document"] = reading.cleaned_data["parsed"]
        elif choice:
            cleaned["protocol_document"] = load_shipped(choice).document
        cleaned.pop("protocol", None)
        cleaned.pop("protocol_file", None)
        return cleaned


class MemberAddForm(forms.Form):
    """Its ids are ``id_add_<field>``: the People page shows it beside ``InviteCreateForm``, both with a ``role``."""

    username = forms.CharField(max_length=150, label="Username")
    role = forms.ChoiceField(choices=Role.choices, initial=Role.ANNOTATOR, label="Role")

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("auto_id", "id_add_%s")
        super().__init__(*args, **kwargs)


class MemberRoleForm(forms.Form):
    role = forms.ChoiceField(choices=Role.choices, label="Role")


class ConfirmForm(forms.Form):
    """A POST that only confirms (remove a member, revoke a link, join with a link): ``confirm=yes``, nothing else."""

    confirm = forms.ChoiceField(choices=[("yes", "Yes")], widget=forms.HiddenInput, initial="yes")


class InviteCreateForm(forms.Form):
    """Its ids are ``id_invite_<field>`` (``MemberAddForm`` says why)."""

    role = forms.ChoiceField(choices=[(role.value, role.label) for role in INVITE_ROLES], label="They join as")
    days = forms.IntegerField(min_value=1, max_value=90, initial=INVITE_DAYS, label="Valid for (days)")
    single_use = forms.BooleanField(required=False, label="For one person: the link closes once someone joins with it")

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("auto_id", "id_invite_%s")
        super().__init__(*args, **kwargs)


class InviteSignUpForm(UserCreationForm):
    """A new account on an invite page: a username and a password Django's validators accept (checked here and
    again by ``services.account_create_with_invite``, which makes the account: the view never calls save())."""


class CreatorGrantForm(forms.Form):
    username = forms.CharField(max_length=150, label="Username")
