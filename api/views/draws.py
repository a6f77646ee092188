"""Draws of a finished auto-label job's turns for human checks (leads): list them with their progress, make one.
The same service as the job's "Human checks" page (``autolabel.checks.drawing``)."""

from django.shortcuts import get_object_or_404
from drf_spectacular.utils import OpenApiExample, extend_schema, extend_schema_view
from rest_framework import generics, serializers, status
from rest_framework.exceptions import ValidationError
from rest_framework.response import Response

from annotator.corpus.draws.services import DrawError, draws_progress
from annotator.domain.draws import MAX_DRAW_SIZE, MAX_SEED
from annotator.domain.vocabulary import DrawStrategy
from annotator.forms.fields import MAX_TEXT
from annotator.models import TurnDraw
from autolabel.checks.drawing import draw_for_job
from autolabel.models import AutoLabelJob

from ..pagination import PagePagination
from ..permissions import LEADS, ProjectScopedView


class DrawSerializer(serializers.Serializer):
    """A draw (``annotator.corpus.draws.services.DrawProgress``): how it was drawn and what became of its turns."""

    id = serializers.IntegerField(source="draw.pk")
    strategy = serializers.ChoiceField(source="draw.strategy", choices=DrawStrategy.choices)
    job = serializers.IntegerField(source="draw.source_job_id", allow_null=True)
    size = serializers.IntegerField(source="draw.size", help_text="How many turns were asked for.")
    seed = serializers.IntegerField(source="draw.seed", allow_null=True, help_text="At random: the seed drawn with.")
    note = serializers.CharField(source="draw.note")
    created_by = serializers.CharField(source="draw.created_by.username", default=None, allow_null=True)
    created_at = serializers.DateTimeField(source="draw.created_at")
    drawn = serializers.IntegerField(help_text="Turns drawn (fewer than asked when the job had fewer left).")
    waiting = serializers.IntegerField(help_text="Drawn turns nobody holds a slot on yet.")
    being_annotated = serializers.IntegerField(help_text="Drawn turns with a slot taken, gold not yet complete.")
    with_gold = serializers.IntegerField(help_text="Drawn turns with gold on every sentence.")
    turns = serializers.SerializerMethodField(help_text="The turns drawn, in the order annotators receive them.")

    def get_turns(self, progress) -> list[int]:
        return [turn.turn_id for turn in progress.turns]


class DrawCreateSerializer(serializers.Serializer):
    strategy = serializers.ChoiceField(choices=DrawStrategy.choices)
    size = serializers.IntegerField(min_value=1, max_value=MAX_DRAW_SIZE, help_text="How many turns to draw.")
    seed = serializers.IntegerField(required=False, allow_null=True, min_value=0, max_value=MAX_SEED,
                                    help_text="At random only; left out, a seed is drawn and recorded.")
    note = serializers.CharField(required=False, allow_blank=True, max_length=MAX_TEXT, default="")


DRAW_EXAMPLE = {
    "id": 4, "strategy": "random", "job": 3, "size": 3, "seed": 80913, "note": "calibration sample",
    "created_by": "lea", "created_at": "2026-11-25T09:40:00Z", "drawn": 3, "waiting": 1, "being_annotated": 1,
    "with_gold": 1, "turns": [52, 17, 40],
}


@extend_schema_view(get=extend_schema(summary="Draws of a job's turns for human checks (leads)", tags=["autolabel"],
                                      examples=[OpenApiExample("Draw", value=DRAW_EXAMPLE)]))
class DrawListView(ProjectScopedView, generics.ListAPIView):
    model = TurnDraw
    method_roles = {"GET": LEADS, "POST": LEADS}
    serializer_class = DrawSerializer
    pagination_class = PagePagination
    filter_backends = []

    def job(self):
        return get_object_or_404(AutoLabelJob, pk=self.kwargs["pk"], project=self.project)

    def project_queryset(self):
        return TurnDraw.objects.filter(project=self.project, source_job_id=self.job().pk).order_by("-created_at", "-id")

    def list(self, request, *args, **kwargs):
        page = self.paginate_queryset(self.get_queryset())
        progress = draws_progress(self.project, draw_ids=[draw.pk for draw in page])
        return self.get_paginated_response(DrawSerializer(progress, many=True).data)

    @extend_schema(
        summary="Draw a finished job's turns for human annotation (leads)",
        description="At random (a seeded sample: the only gold that can correct the job's estimates) or smallest "
                    "vote margin first. The turns drawn come first in every annotator's queue, in draw order. "
                    "Refused (400) for a job not finished or when no turn is left to draw.",
        request=DrawCreateSerializer, responses={201: DrawSerializer},
        examples=[
            OpenApiExample("Draw", request_only=True, value={"strategy": "random", "size": 3}),
            OpenApiExample("Drawn", response_only=True, status_codes=["201"],
                           value={**DRAW_EXAMPLE, "waiting": 3, "being_annotated": 0, "with_gold": 0}),
        ],
        tags=["autolabel"],
    )
    def post(self, request, slug, pk):
        job = self.job()
        serializer = DrawCreateSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        try:
            draw = draw_for_job(job, strategy=data["strategy"], size=data["size"], seed=data.get("seed"),
                                actor=request.user, note=data["note"])
        except DrawError as refusal:
            raise ValidationError({"non_field_errors": [str(refusal)]}) from None
        [progress] = draws_progress(self.project, draw_ids=[draw.pk])
        return Response(DrawSerializer(progress).data, status=status.HTTP_201_CREATED)
