"""The learned judge page's POSTs, as Django forms."""

from django import forms

from autolabel.learned.training import SHAPES
from autolabel.models import LearnedJudge


class JudgeTrainForm(forms.Form):
    """Train a judge on the project's gold now, in its current protocol: the model's shape chosen on the gold, or
    one the lead fixes."""

    shape = forms.ChoiceField(choices=[(key, name) for key, (name, _) in SHAPES.items()], initial="choose",
                              required=False, label="Model")

    learning_curve = forms.BooleanField(required=False, initial=False, label="Learning curve", help_text=(
        "Also macro F1 against a growing share of the gold: four more cross-validations, most of a training's time."))

    def clean_shape(self):
        return self.cleaned_data.get("shape") or "choose"  # a POST without it (a script): the default


class JudgeLabelForm(forms.Form):
    """Label the project's turns with a trained judge of the project."""

    judge = forms.ModelChoiceField(queryset=LearnedJudge.objects.none(), label="Learned judge")

    def __init__(self, *args, project, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["judge"].queryset = LearnedJudge.objects.filter(project=project, status=LearnedJudge.Status.DONE)
