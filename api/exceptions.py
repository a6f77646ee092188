"""One error body for every API failure.

Every error the API returns has the same shape, whatever raised it::

    {"status": 400, "code": "invalid", "detail": "Some fields are invalid.",
     "errors": {"role": ["\"boss\" is not a valid choice."]}}

``errors`` maps a field name (or ``non_field_errors``) to its messages and is
present only on validation failures. Django's ``ValidationError`` and the
protocol's ``ProtocolError`` raised by services become 400s with the same
shape, so views never translate them one by one.
"""

from django.core.exceptions import PermissionDenied as DjangoPermissionDenied
from django.core.exceptions import ValidationError as DjangoValidationError
from django.http import Http404
from rest_framework import exceptions, status
from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_exception_handler

from annotator.domain.protocol.document import ProtocolError
from annotator.queue import BrokerUnavailable


class ServiceUnavailable(exceptions.APIException):
    status_code = status.HTTP_503_SERVICE_UNAVAILABLE
    default_detail = "The service cannot do this right now; try again in a moment."
    default_code = "broker_unavailable"


class Conflict(exceptions.APIException):
    status_code = status.HTTP_409_CONFLICT
    default_detail = "The object changed since you read it; reload and try again."
    default_code = "conflict"


def _as_field_errors(detail):
    """DRF's nested error detail as ``{field: [messages]}``, flattened one level."""
    if isinstance(detail, dict):
        out = {}
        for field, messages in detail.items():
            if isinstance(messages, dict):
                for sub, sub_messages in _as_field_errors(messages).items():
                    out[f"{field}.{sub}"] = sub_messages
            elif isinstance(messages, list):
                flat = []
                for message in messages:
                    if isinstance(message, dict):
                        for sub, sub_messages in _as_field_errors(message).items():
                            out[f"{field}.{sub}"] = sub_messages
                    else:
                        flat.append(str(message))
                if flat:
                    out[field] = flat
            else:
                out[field] = [str(messages)]
        return out
    if isinstance(detail, list):
        return {"non_field_errors": [str(m) for m in detail]}
    return {"non_field_errors": [str(detail)]}


def _service_errors():
    """Exceptions the services raise for a refused action, imported lazily (no import cycles)."""
    from annotator.corpus.imports.importers import ImportFormatError
    from annotator.work.services import SubmitRefused
    from annotator.work.write import AnnotationError, AssignmentClosed, VersionConflict
    from annotator.work.assignment import AssignmentError
    from annotator.gold.services import GoldError
    from annotator.qa.services import QAError
    from annotator.qa.qualification import QualificationError
    from autolabel.jobs.services import JobError

    refused = (AnnotationError, AssignmentError, GoldError, QAError, QualificationError, JobError, ImportFormatError)
    return VersionConflict, AssignmentClosed, SubmitRefused, refused


def _translate(exc):
    version_conflict, closed, submit_refused, refused = _service_errors()
    if isinstance(exc, version_conflict):
        conflict = Conflict(str(exc), code="version_conflict")
        conflict.current_version = exc.current_version
        return conflict
    if isinstance(exc, closed):
        return Conflict(str(exc), code="assignment_closed")
    if isinstance(exc, submit_refused):
        return exceptions.ValidationError({"non_field_errors": exc.problems})
    if isinstance(exc, refused):
        return exceptions.ValidationError({"non_field_errors": [str(exc)]})
    if isinstance(exc, DjangoValidationError):
        if hasattr(exc, "error_dict"):
            detail = {
                ("non_field_errors" if field == "__all__" else field): messages
                for field, messages in exc.message_dict.items()
            }
        else:
            detail = {"non_field_errors": exc.messages}
        return exceptions.ValidationError(detail)
    if isinstance(exc, ProtocolError):
        return exceptions.ValidationError({"answer": [str(exc)]})
    if isinstance(exc, BrokerUnavailable):
        # The job was not queued (the broker refused it) and is recorded as failed with this reason.
        return ServiceUnavailable(str(exc))
    if isinstance(exc, Http404):
        return exceptions.NotFound()
    if isinstance(exc, DjangoPermissionDenied):
        # The services' refusals say why ("Only a project lead ..."); a bare one gets DRF's sentence.
        return exceptions.PermissionDenied(str(exc) or None)
    return exc


def api_exception_handler(exc, context):
    exc = _translate(exc)
    response = drf_exception_handler(exc, context)
    if response is None:
        return None  # a real bug: let Django log it and answer 500
    body = {"status": response.status_code}
    if isinstance(exc, exceptions.ValidationError):
        body["code"] = "invalid"
        body["detail"] = "Some fields are invalid."
        body["errors"] = _as_field_errors(exc.detail)
        # A single non-field message is the detail itself.
        non_field = body["errors"].get("non_field_errors")
        if non_field and len(body["errors"]) == 1:
            body["detail"] = " ".join(non_field)
    else:
        codes = exc.get_codes() if isinstance(exc, exceptions.APIException) else "error"
        body["code"] = codes if isinstance(codes, str) else "error"
        detail = getattr(exc, "detail", "")
        body["detail"] = str(detail) if not isinstance(detail, (list, dict)) else str(detail)
    if getattr(exc, "current_version", None) is not None:
        body["current_version"] = exc.current_version
    if isinstance(exc, exceptions.Throttled) and exc.wait is not None:
        body["retry_after"] = int(exc.wait)
    return Response(body, status=response.status_code, headers={
        k: v for k, v in response.items() if k in ("WWW-Authenticate", "Retry-After", "Allow")
    })


def _not_found_view():
    """Any other URL under /api/: a 404 in the API's error shape, not Django's HTML page."""
    from rest_framework.permissions import AllowAny
    from rest_framework.views import APIView

    class ApiNotFound(APIView):
        authentication_classes = []
        permission_classes = [AllowAny]
        throttle_classes = []
        schema = None

        def initial(self, request, *args, **kwargs):
            raise exceptions.NotFound("No such API endpoint.")

    return ApiNotFound.as_view()


api_not_found = _not_found_view()
