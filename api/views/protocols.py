"""A project's protocol document: read by its members, replaced by a lead (a new version)."""

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiExample, OpenApiResponse, extend_schema
from rest_framework import serializers, status
from rest_framework.parsers import FormParser, MultiPartParser
from rest_framework.response import Response

from annotator.domain.protocol.document import ProtocolDocumentError
from annotator.projects.protocol_services import protocol_set
from annotator.projects.protocols import protocol_for

from ..parsers import ProtocolDocumentParser
from ..permissions import LEADS, ProjectScopedView

REFUSED_EXAMPLE = {
    "status": 400, "code": "invalid", "detail": "The protocol document was refused: 2 problem(s); nothing was saved.",
    "errors": {"/steps/1/answers/1/next": ["unknown step 'rationale'"],
               "/labels/7": ["label 'orphan' is reached by no path"]},
    "problems": [{"path": "/steps/1/answers/1/next", "message": "unknown step 'rationale'"},
                 {"path": "/labels/7", "message": "label 'orphan' is reached by no path"}],
}


class ProtocolDocumentSerializer(serializers.Serializer):
    """A protocol document (docs/protocols.md, annotator/protocols/protocol.schema.json): checked whole by
    ``load_protocol``, not field by field, so that every problem is named by its path in the document."""


def refused(problems) -> Response:
    errors: dict[str, list[str]] = {}
    for where, message in problems:
        errors.setdefault(where, []).append(message)
    return Response({
        "status": 400, "code": "invalid",
        "detail": f"The protocol document was refused: {len(problems)} problem(s); nothing was saved.",
        "errors": errors, "problems": [{"path": where, "message": message} for where, message in problems],
    }, status=status.HTTP_400_BAD_REQUEST)


class ProtocolView(ProjectScopedView):
    """The project's protocol document (docs/protocols.md): steps, answers, labels, groups. The labels and steps
    the other endpoints read and write are this document's ids."""

    method_roles = {"PUT": LEADS}
    serializer_class = ProtocolDocumentSerializer
    # A lone surrogate in the document is refused by its validation, by its JSON pointer (as a NUL is).
    parser_classes = [ProtocolDocumentParser, FormParser, MultiPartParser]
    filter_backends = []

    def get_object(self):
        return self.project  # what a PUT changes (OPTIONS asks for it to describe PUT)

    @extend_schema(summary="The project's protocol document", responses={200: OpenApiTypes.OBJECT},
                   examples=[OpenApiExample("CogniBench (abridged)", value={
                       "id": "cognibench", "version": 1, "name": "CogniBench", "start": "relevance", "steps": ["..."],
                       "labels": ["..."], "groups": {"hallucination": ["invented", "misleading", "speculative"]}})],
                   tags=["projects"])
    def get(self, request, slug):
        return Response(protocol_for(self.project).document)

    @extend_schema(
        summary="Set the protocol (leads): a new version",
        description="The body is a protocol document, or `{\"document\": {...}, \"label_mapping\": {old: new or null}}` "
                    "once the project has annotations. A refused document is a 400 listing every problem by its path "
                    "in the document; nothing is saved then.",
        request=OpenApiTypes.OBJECT,
        responses={200: OpenApiTypes.OBJECT, 400: OpenApiResponse(OpenApiTypes.OBJECT, examples=[
            OpenApiExample("Refused", value=REFUSED_EXAMPLE, status_codes=["400"])])},
        tags=["projects"],
    )
    def put(self, request, slug):
        body = request.data
        mapping = None
        if isinstance(body, dict) and "document" in body:
            body, mapping = body.get("document"), body.get("label_mapping")
        try:
            protocol_set(self.project, body, user=request.user, label_mapping=mapping)
        except ProtocolDocumentError as error:
            return refused(error.problems)
        self.project.refresh_from_db(fields=["protocol_version"])
        return Response(protocol_for(self.project).document)

