"""The query form of the job comparison (GET): which other finished job of the project to hold against this one."""

from django import forms

from annotator.forms.fields import IdField


class CompareQueryForm(forms.Form):
    """``?other=`` a finished job of the same project, other than the one evaluated."""

    other = IdField(widget=forms.Select, label="Compare with job")

    def __init__(self, *args, candidates, **kwargs):
        super().__init__(*args, **kwargs)
        self.candidates = candidates
        self.fields["other"].widget.choices = [
            (job.pk, f"#{job.pk} · {job.labelled_by}")
            for job in candidates
        ]

    def clean_other(self):
        job = self.candidates.filter(pk=self.cleaned_data["other"]).first()
        if job is None:
            raise forms.ValidationError("Choose another finished job of this project.")
        return job
