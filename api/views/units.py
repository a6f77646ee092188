"""Flags on mis-segmented units, read-only: a lead lists the project's, anyone else their own.

An annotator's note on a unit can give their judgement away, so another annotator never reads it; a lead does
not read another person's flag on a turn they hold an unsubmitted slot on (``unit_selectors.flags_for_reader``).
"""

from drf_spectacular.utils import OpenApiExample, OpenApiParameter, extend_schema, extend_schema_view
from rest_framework import generics, serializers

from annotator.access import LEAD_ROLES
from annotator.corpus.units.selectors import flags_for_reader
from annotator.models import UnitFlag
from annotator.domain.vocabulary import UnitFlagKind

from ..pagination import PagePagination
from ..permissions import ProjectScopedView


class UnitFlagSerializer(serializers.ModelSerializer):
    flagged_by = serializers.CharField(source="flagged_by.username", read_only=True)
    resolved_by = serializers.CharField(source="resolved_by.username", read_only=True, allow_null=True, default=None)
    kind = serializers.ChoiceField(choices=UnitFlagKind.choices, read_only=True)
    status = serializers.ChoiceField(choices=UnitFlag.Status.choices, read_only=True)

    class Meta:
        model = UnitFlag
        fields = ["id", "turn", "sentence", "sentence_index", "sentence_text", "kind", "note", "flagged_by", "status",
                  "resolved_by", "resolved_at", "resolution", "created_at"]
        read_only_fields = fields


FLAG_EXAMPLE = {
    "id": 3, "turn": 40, "sentence": 902, "sentence_index": 4,
    "sentence_text": "The lighthouse was automated in 1984. The red and white bands were chosen because they show.",
    "kind": "two_sentences", "note": "Two claims, one label each.", "flagged_by": "ada", "status": "resolved",
    "resolved_by": "lea", "resolved_at": "2026-11-21T10:03:00Z", "resolution": "Split into units 4 and 5.",
    "created_at": "2026-11-21T10:01:00Z",
}


@extend_schema_view(get=extend_schema(
    summary="Flags on mis-segmented units: yours (leads: the project's)",
    parameters=[OpenApiParameter("status", str, enum=UnitFlag.Status.values)],
    tags=["units"], examples=[OpenApiExample("Flag", value=FLAG_EXAMPLE)],
))
class UnitFlagListView(ProjectScopedView, generics.ListAPIView):
    model = UnitFlag
    serializer_class = UnitFlagSerializer
    pagination_class = PagePagination
    filter_backends = []

    def project_queryset(self):
        flags = flags_for_reader(self.request.user, self.project, is_lead=self.role in LEAD_ROLES)
        state = self.request.query_params.get("status")
        if state is not None:
            if state not in UnitFlag.Status.values:
                raise serializers.ValidationError({"status": [f'"{state}" is not a valid choice.']})
            flags = flags.filter(status=state)
        return flags
