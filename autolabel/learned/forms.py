"""The learned judge page's POSTs, as Django forms."""

from django import forms

from autolabel.models import LearnedJudge


class JudgeTrainForm(forms.Form):
    """Train a judge on the project's gold now (nothing to choose: the project's current protocol and gold)."""


class JudgeLabelForm(forms.Form):
    """Label the project's turns with a trained judge of the project."""

    judge = forms.ModelChoiceField(queryset=LearnedJudge.objects.none(), label="Learned judge")

    def __init__(self, *args, project, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["judge"].queryset = LearnedJudge.objects.filter(project=project, status=LearnedJudge.Status.DONE)
