"""The form a lead uploads an import with (project page), and the checks every upload route shares."""

from django import forms

from annotator.corpus.imports.importers.uploads import upload_limit_text, uploads_problems
from annotator.models import ImportBatch


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

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["upload"].help_text = (
            f"CogniBench dialogues.json, a RefChecker *_answers.json, or a project .jsonl file; "
            f"at most {upload_limit_text()}."
        )

    def clean(self):
        return upload_problems_add(self, super().clean())
