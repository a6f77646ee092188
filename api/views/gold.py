"""Adjudication queue and decisions, a lead's gold override, the agreement report, the gold export."""

from django.db.models import Exists, OuterRef, Prefetch
from django.http import StreamingHttpResponse
from django.shortcuts import get_object_or_404
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiExample, OpenApiParameter, OpenApiResponse, extend_schema, extend_schema_view
from rest_framework import generics, serializers
from rest_framework.response import Response

from annotator.access import BLIND_EXPORT_MESSAGE, is_lead
from annotator.corpus.exports.exporters import CONTENT_TYPES, FILENAMES, FORMATS, export_pieces, streamed_pieces
from annotator.corpus.forms import CsvExportOptionsForm
from annotator.projects.protocols import protocol_for
from annotator.models import Adjudication, Assignment, GoldLabel, Sentence, SentenceAnnotation
from annotator.reports.selectors import project_report
from annotator.gold.services import adjudication_resolve, gold_override

from .. import serializers as s
from ..pagination import PagePagination
from ..permissions import ADJUDICATORS, LEADS, ProjectScopedView
from .corpus import GOLD_EXAMPLE

ADJUDICATION_EXAMPLE = {
    "id": 31, "sentence": 902, "sentence_index": 1, "sentence_text": "It is probably the most important river.",
    "turn": 40, "dialogue_external_id": "cb-000123", "status": "open",
    "annotations": [
        {"assignment": 77, "annotator": None, "label": "speculative",
         "path": {"relevance": "relevant", "kind": "cognitive", "rational": "yes", "grounded": "no"}, "note": ""},
        {"assignment": 78, "annotator": None, "label": "invented",
         "path": {"relevance": "relevant", "kind": "factual", "faithfulness": "invented"}, "note": ""},
    ],
    "adjudicator": None, "label": "", "path": {}, "chosen_assignment": None, "reason": "",
    "created_at": "2026-11-21T10:00:00Z", "resolved_at": None, "annotated_by_you": False,
}


class AdjudicationQueryMixin:
    model = Adjudication

    def project_queryset(self):
        annotated = Assignment.objects.filter(turn=OuterRef("turn_id"), annotator=self.request.user)
        annotations = SentenceAnnotation.objects.select_related("assignment__annotator").order_by("assignment_id")
        return (
            # Not the disputes of turns the user holds an unsubmitted slot on: they would show the others' answers.
            Adjudication.objects.filter(turn__dialogue__project=self.project).exclude(turn_id__in=self.blind_turns)
            .select_related("sentence", "turn__dialogue", "adjudicator")
            .prefetch_related(Prefetch("sentence__annotations", queryset=annotations))
            .annotate(annotated_by_you=Exists(annotated))
            .order_by("created_at", "id")
        )

    def get_serializer_context(self):
        context = super().get_serializer_context()
        if not getattr(self, "swagger_fake_view", False):
            context["show_names"] = is_lead(self.request.user, self.project)
        return context


@extend_schema_view(get=extend_schema(
    summary="Adjudication queue (adjudicators and leads)",
    description="Open disputes oldest first by default (`?status=resolved` for decided ones). Annotator "
                "names are shown to leads only.",
    parameters=[OpenApiParameter("status", str, enum=[c for c, _ in Adjudication.Status.choices],
                                 description="Default: open.")],
    tags=["adjudication"],
    examples=[OpenApiExample("A dispute", value=ADJUDICATION_EXAMPLE)],
))
class AdjudicationListView(AdjudicationQueryMixin, ProjectScopedView, generics.ListAPIView):
    method_roles = {"GET": ADJUDICATORS}
    serializer_class = s.AdjudicationSerializer
    pagination_class = PagePagination
    filter_backends = []

    def get_queryset(self):
        queryset = super().get_queryset()
        state = self.request.query_params.get("status", Adjudication.Status.OPEN)
        if state not in Adjudication.Status.values:
            raise serializers.ValidationError({"status": [f'"{state}" is not a valid choice.']})
        return queryset.filter(status=state)


@extend_schema_view(get=extend_schema(summary="A dispute", tags=["adjudication"],
                                      examples=[OpenApiExample("A dispute", value=ADJUDICATION_EXAMPLE)]))
class AdjudicationDetailView(AdjudicationQueryMixin, ProjectScopedView, generics.RetrieveAPIView):
    method_roles = {"GET": ADJUDICATORS}
    serializer_class = s.AdjudicationSerializer
    filter_backends = []


def _gold_response(gold: GoldLabel) -> Response:
    """A gold label a service just wrote, read back with what its serializer shows."""
    gold = GoldLabel.objects.select_related("sentence__turn__dialogue", "decided_by").get(pk=gold.pk)
    return Response(s.GoldSerializer(gold).data)


class AdjudicationResolveView(AdjudicationQueryMixin, ProjectScopedView):
    """Decide a dispute: walk the protocol (`path`), name a `label`, or adopt one side (`side`), with a reason."""

    method_roles = {"POST": ADJUDICATORS}
    serializer_class = s.ResolveSerializer
    filter_backends = []

    @extend_schema(
        summary="Resolve a dispute",
        request=s.ResolveSerializer,
        responses={200: s.GoldSerializer},
        examples=[
            OpenApiExample("Side with one annotator", request_only=True,
                           value={"side": 77, "reason": "The reference never says it is the most important."}),
            OpenApiExample("Name the label", request_only=True,
                           value={"label": "speculative", "reason": "An ungrounded judgement.",
                                  "evidence": [[0, 38]]}),
            OpenApiExample("New gold", response_only=True,
                           value={**GOLD_EXAMPLE, "label": "speculative", "provenance": "adjudication"}),
        ],
        tags=["adjudication"],
    )
    def post(self, request, slug, pk):
        serializer = s.ResolveSerializer(data=request.data, context={"protocol": protocol_for(self.project)})
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        adjudication = get_object_or_404(Adjudication.objects.exclude(turn_id__in=self.blind_turns), pk=pk,
                                         turn__dialogue__project=self.project)
        gold = adjudication_resolve(
            adjudication, request.user, reason=data["reason"], path=data.get("path"), label=data.get("label"),
            side=data.get("side"), evidence=[tuple(pair) for pair in data.get("evidence", [])],
            texts={step: text for step, text in data.get("texts", {}).items() if text.strip()} or None,
        )
        return _gold_response(gold)


class GoldOverrideView(ProjectScopedView):
    """A lead sets a sentence's gold, whatever it was (an open dispute on it is closed by the same decision)."""

    method_roles = {"POST": LEADS}
    serializer_class = s.GoldOverrideSerializer
    filter_backends = []

    @extend_schema(
        summary="Override a sentence's gold (leads)",
        request=s.GoldOverrideSerializer,
        responses={200: s.GoldSerializer},
        examples=[
            OpenApiExample("Override", request_only=True,
                           value={"label": "invented", "reason": "The reference gives another length."}),
            OpenApiExample("New gold", response_only=True, value={
                **GOLD_EXAMPLE, "label": "invented", "provenance": "override",
                "path": {"relevance": "relevant", "kind": "factual", "faithfulness": "invented"},
                "reason": "The reference gives another length.", "decided_by": "lea"}),
        ],
        tags=["gold"],
    )
    def post(self, request, slug, sentence_id):
        serializer = s.GoldOverrideSerializer(data=request.data, context={"protocol": protocol_for(self.project)})
        serializer.is_valid(raise_exception=True)
        sentence = get_object_or_404(
            Sentence.objects.select_related("turn__dialogue__project").exclude(turn_id__in=self.blind_turns),
            pk=sentence_id, turn__dialogue__project=self.project,
        )
        gold = gold_override(sentence, request.user, serializer.validated_data["label"],
                             serializer.validated_data["reason"])
        return _gold_response(gold)


class ReportSerializer(serializers.Serializer):
    version = serializers.CharField(help_text="Changes whenever gold or the submitted annotations change.")
    agreement = s.AgreementReportSerializer()
    gold = serializers.DictField(help_text="Gold label distribution and hallucination rates.")


class AgreementReportView(ProjectScopedView):
    """The reports page's numbers: agreement per protocol step, per pair, per annotator, per batch, per week."""

    method_roles = {"GET": LEADS}
    serializer_class = ReportSerializer
    filter_backends = []

    @extend_schema(
        summary="Agreement report (leads)",
        examples=[OpenApiExample("Report", value={
            "version": "42-1763719200.000000-17",
            "agreement": {"project": "cognibench-pilot", "batch": None, "labels": ["irrelevant", "faithful"],
                          "measures": [{"variable": "label", "title": "Final label (7 categories)",
                                        "alpha": 0.81, "percent": 0.93, "kappa": 0.8, "units": 120}],
                          "confusion": [[10, 1], [1, 108]], "pairs": [], "annotators": [], "batches": [],
                          "weekly": []},
            "gold": {"sentences": 120, "hallucination_rate": 0.12},
        })],
        tags=["reports"],
    )
    def get(self, request, slug):
        self.refuse_if_blind()
        return Response(project_report(self.project))


class GoldExportView(ProjectScopedView):
    """Every turn of the project with its gold, streamed (memory stays flat whatever the size)."""

    method_roles = {"GET": LEADS}
    filter_backends = []

    @extend_schema(
        summary="Export gold (leads; streamed)",
        parameters=[OpenApiParameter("fmt", str, enum=sorted(FORMATS), default="jsonl",
                                     description="`jsonl`: one turn per line (docs/jsonl-format.md); "
                                                 "`cognibench`: CogniBench's labels.json; `csv`: one row per "
                                                 "sentence, the path's steps as columns (docs/jsonl-format.md)."),
                    OpenApiParameter("min_severity", str, required=False,
                                     description="JSONL only: 1-5, or `project` for the project's severity "
                                                 "threshold; each hallucinated sentence's gold then says "
                                                 "whether it is `severe` (rated at least that)."),
                    OpenApiParameter("bom", bool, required=False,
                                     description="CSV only: start with a UTF-8 byte order mark (Excel reads the "
                                                 "file as UTF-8 only then)."),
                    OpenApiParameter("annotators", bool, required=False,
                                     description="CSV only: a column `annotator.<username>` per annotator who "
                                                 "submitted work, with their label's name beside the gold.")],
        responses={(200, "application/x-ndjson"): OpenApiResponse(
            OpenApiTypes.STR, description="One JSON object per turn and line."),
            (200, "application/json"): OpenApiResponse(OpenApiTypes.OBJECT, description="CogniBench labels.json."),
            (200, "text/csv"): OpenApiResponse(OpenApiTypes.STR, description="One row per sentence.")},
        tags=["gold"],
    )
    def get(self, request, slug):
        self.refuse_if_blind(BLIND_EXPORT_MESSAGE)
        fmt = request.query_params.get("fmt", "jsonl")
        if fmt not in FORMATS:
            raise serializers.ValidationError({"fmt": [f'"{fmt}" is not a valid choice.']})
        options = CsvExportOptionsForm(request.query_params)
        options.is_valid()  # two check boxes: any value is on or off
        try:
            pieces = export_pieces(self.project, fmt, min_severity=request.query_params.get("min_severity"),
                                   csv_options=options.cleaned_data if fmt == "csv" else None)
        except ValueError as exc:
            raise serializers.ValidationError({"min_severity": [str(exc)]}) from None
        response = StreamingHttpResponse(streamed_pieces(pieces), content_type=CONTENT_TYPES[fmt])
        response["Content-Disposition"] = f'attachment; filename="{FILENAMES[fmt].format(slug=self.project.slug)}"'
        response["Cache-Control"] = "no-store"
        return response
