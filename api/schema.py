"""OpenAPI generation: every operation documents the shared error body."""

from drf_spectacular.openapi import AutoSchema
from drf_spectacular.utils import OpenApiExample, OpenApiResponse
from rest_framework import serializers


class ErrorSerializer(serializers.Serializer):
    status = serializers.IntegerField(help_text="The HTTP status, repeated.")
    code = serializers.CharField(help_text="Machine-readable: invalid, not_authenticated, not_found, throttled…")
    detail = serializers.CharField(help_text="A sentence for people.")
    errors = serializers.DictField(
        child=serializers.ListField(child=serializers.CharField()),
        required=False,
        help_text="Validation failures only: field name (or non_field_errors) to messages.",
    )
    retry_after = serializers.IntegerField(required=False, help_text="429 only: seconds to wait.")
    current_version = serializers.IntegerField(
        required=False, help_text="409 version_conflict only: the assignment's version now; reload and retry."
    )


ERROR_EXAMPLES = {
    "400": OpenApiExample(
        "Invalid field",
        value={"status": 400, "code": "invalid", "detail": "Some fields are invalid.",
               "errors": {"role": ['"boss" is not a valid choice.']}},
        response_only=True, status_codes=["400"],
    ),
    "401": OpenApiExample(
        "No credentials",
        value={"status": 401, "code": "not_authenticated",
               "detail": "Authentication credentials were not provided."},
        response_only=True, status_codes=["401"],
    ),
    "403": OpenApiExample(
        "CSRF failure (session clients)",
        value={"status": 403, "code": "permission_denied",
               "detail": "CSRF Failed: CSRF token missing."},
        response_only=True, status_codes=["403"],
    ),
    "404": OpenApiExample(
        "Not found (or not yours to see)",
        value={"status": 404, "code": "not_found", "detail": "Not found."},
        response_only=True, status_codes=["404"],
    ),
    "409": OpenApiExample(
        "Changed elsewhere",
        value={"status": 409, "code": "version_conflict", "current_version": 8,
               "detail": "This turn was changed in another tab or window."},
        response_only=True, status_codes=["409"],
    ),
    "429": OpenApiExample(
        "Throttled",
        value={"status": 429, "code": "throttled", "detail": "Request was throttled.", "retry_after": 42},
        response_only=True, status_codes=["429"],
    ),
}

ERROR_DESCRIPTIONS = {
    "400": "Invalid input: field-level messages in `errors`.",
    "401": "No or invalid credentials (send `Authorization: Token <key>`).",
    "403": "Forbidden (a session client without its CSRF token).",
    "404": "No such object, or not one you may see (existence is not disclosed).",
    "429": "Too many requests from this token; see `retry_after`.",
}


class ApiAutoSchema(AutoSchema):
    """Adds the error responses every endpoint can give, in the shared error shape."""


    def _get_response_bodies(self, direction="response"):
        responses = super()._get_response_bodies(direction)
        if direction != "response":
            return responses
        public = self.method in getattr(self.view, "public_methods", ())
        for code, description in ERROR_DESCRIPTIONS.items():
            if code in responses or (public and code in ("401", "403")):
                continue
            responses[code] = self._get_response_for_code(
                OpenApiResponse(ErrorSerializer, description=description, examples=[ERROR_EXAMPLES[code]]),
                code,
                direction=direction,
            )
        return responses
