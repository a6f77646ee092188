"""The API's JSON parser: DRF's, within the limits of ``annotator.json_input`` (depth, size, digits).

DRF's own ``JSONParser`` let a ``RecursionError`` through (an array nested 100,000 deep sent to the anonymous
``POST /api/v1/auth/token/`` was a 500 with an HTML body) and read a body of any length. This one reads at
most ``DATA_UPLOAD_MAX_MEMORY_SIZE`` bytes (Django's limit on a request body that is not a file) and refuses
anything ``json_loads_limited`` refuses with a ``ParseError``: a 400 in the API's error body. A lone surrogate is a
400 naming its field, as a NUL is (``errors``: ``{"answer": [...]}``, ``{"path.relevance": [...]}``). It is the
default parser (``REST_FRAMEWORK["DEFAULT_PARSER_CLASSES"]``); ``ProtocolDocumentParser`` leaves lone surrogates to
the protocol's validation, which names them by their JSON pointer.
"""

from django.conf import settings
from rest_framework.exceptions import ParseError, ValidationError
from rest_framework.parsers import JSONParser

from annotator.json_input import JSONInputError, UnstorableTextError, json_loads_limited


class LimitedJSONParser(JSONParser):
    refuse_surrogates = True

    def parse(self, stream, media_type=None, parser_context=None):
        limit = int(settings.DATA_UPLOAD_MAX_MEMORY_SIZE)
        raw = stream.read(limit + 1) if stream is not None else b""  # one byte past the limit tells it is too long
        if len(raw) > limit:
            raise ParseError(f"The JSON body is longer than {limit:,} bytes (DATA_UPLOAD_MAX_MEMORY_SIZE).")
        encoding = (parser_context or {}).get("encoding", settings.DEFAULT_CHARSET)
        try:
            text = raw.decode(encoding)
        except (UnicodeDecodeError, LookupError):
            raise ParseError(f"The JSON body is not {encoding} text.") from None
        try:
            return json_loads_limited(text, refuse_surrogates=self.refuse_surrogates)
        except UnstorableTextError as refused:
            field = ".".join(str(step) for step in refused.path) or "non_field_errors"
            raise ValidationError({field: [f"The text {refused.problem}."]}) from None
        except JSONInputError as refused:
            raise ParseError(str(refused)) from None


class ProtocolDocumentParser(LimitedJSONParser):
    """A protocol document's body: its validation refuses a lone surrogate as a NUL, by its JSON pointer."""

    refuse_surrogates = False
