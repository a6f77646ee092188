"""Samples of a project's turns drawn for human annotation, recorded with how they were drawn.

A draw at random is what lets human gold correct the pre-labeler's estimates (prediction-powered
inference needs a random sample); a draw by uncertainty sends people where the pre-labeler is least sure.
Either way the draw is kept, so the gold a turn received can be traced to the choice that sent it.
"""

from django.conf import settings
from django.db import models

from annotator.domain.vocabulary import DrawStrategy


class TurnDraw(models.Model):
    project = models.ForeignKey("annotator.Project", on_delete=models.CASCADE, related_name="turn_draws")
    strategy = models.CharField(max_length=20, choices=DrawStrategy.choices)
    # The pre-labelling job whose turns were drawn from (and whose vote margins order an uncertainty draw).
    # A plain id, not a foreign key: the annotation core does not depend on the pre-labeler's app.
    source_job_id = models.PositiveIntegerField(null=True, blank=True)
    size = models.PositiveIntegerField(help_text="How many turns were asked for.")
    seed = models.BigIntegerField(null=True, blank=True, help_text="The random draw's seed, to reproduce it.")
    note = models.TextField(blank=True)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self):
        return f"Draw {self.pk} ({self.strategy}, {self.size} turns) of {self.project.slug}"


class DrawnTurn(models.Model):
    """One turn of a draw, in the order annotators receive it."""

    draw = models.ForeignKey(TurnDraw, on_delete=models.CASCADE, related_name="drawn_turns")
    turn = models.ForeignKey("annotator.Turn", on_delete=models.CASCADE, related_name="draws")
    position = models.PositiveIntegerField()

    class Meta:
        ordering = ["draw_id", "position"]
        constraints = [models.UniqueConstraint(fields=["draw", "turn"], name="drawn_turn_once")]
        indexes = [models.Index(fields=["turn"], name="drawn_turn_by_turn")]
