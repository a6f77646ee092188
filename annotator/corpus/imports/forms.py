"""The form a lead uploads an import with (project page), and the checks every upload route shares."""

from django import forms

from annotator.corpus.imports.importers.cognibench import labels_are_cognibench
from annotator.corpus.imports.importers.uploads import upload_limit_text, uploads_problems
from annotator.models import ImportBatch
from annotator.projects.protocols import protocol_for


def upload_problems_add(form: forms.BaseForm, data: dict) -> dict:
    """Add to ``form`` the problems of its files (kind, size, extension, content); the admin's form uses it too."""
    if data.get("kind"):
        for field, message in uploads_problems(data["kind"], data.get("upload"), data.get("second_upload")).items():
            if field not in form.errors:
                form.add_error(field, message)
    return data


class ImportUploadForm(forms.Form):
    kind = forms.ChoiceField(choices=ImportBatch.Kind.choices, initial=ImportBatch.Kind.COGNIBENCH,
                             label="Format")
    upload = forms.FileField(label="File", widget=forms.FileInput(attrs={"accept": ".json,.jsonl"}))
    second_upload = forms.FileField(label="labels.json (CogniBench, optional)", required=False,
                                    widget=forms.FileInput(attrs={"accept": ".json"}))

    def __init__(self, *args, project=None, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["kind"].help_text = ("CogniBench: its dialogues.json (and labels.json); RefChecker: an "
                                         "*_answers.json; Project JSONL: a .jsonl file, such as a project's export.")
        protocol = protocol_for(project) if project is not None else None
        if protocol is not None and not labels_are_cognibench(protocol):
            # CogniBench's and RefChecker's labels are CogniBench's: only a Project JSONL carries this protocol's.
            self.fields["kind"].initial = ImportBatch.Kind.JSONL
            self.fields["kind"].help_text += (f" This project follows {protocol.name}: its labels come only in a "
                                              "Project JSONL file (CogniBench's and RefChecker's files carry "
                                              "CogniBench's labels).")
        self.fields["upload"].help_text = (
            f"CogniBench dialogues.json, a RefChecker *_answers.json, or a project .jsonl file; "
            f"at most {upload_limit_text()}."
        )

    def clean(self):
        return upload_problems_add(self, super().clean())
