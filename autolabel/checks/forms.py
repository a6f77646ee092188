"""The form of the "Human checks" page: draw a finished job's turns for human annotation."""

from django import forms

from annotator.domain.draws import MAX_DRAW_SIZE, MAX_SEED
from annotator.domain.vocabulary import DrawStrategy
from annotator.forms.fields import MAX_TEXT


class DrawForm(forms.Form):
    strategy = forms.ChoiceField(
        choices=DrawStrategy.choices, initial=DrawStrategy.RANDOM, widget=forms.RadioSelect, label="How to draw",
        help_text="Only a draw at random lets the gold it produces correct the pre-labeler's estimates.",
    )
    size = forms.IntegerField(min_value=1, max_value=MAX_DRAW_SIZE, initial=50, label="Number of turns")
    seed = forms.IntegerField(
        required=False, min_value=0, max_value=MAX_SEED, label="Seed (optional)",
        help_text="At random only. Blank: a seed is drawn and recorded, so the draw can be reproduced.",
    )
    note = forms.CharField(required=False, max_length=MAX_TEXT, widget=forms.Textarea(attrs={"rows": 2}),
                           help_text="Why this draw (kept with it).")
