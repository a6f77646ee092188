"""What a request, an upload, an import and a protocol document may hold (README, "Configuration"): past these,
a route refuses with the reason, never a 500."""

import os

# Uploads larger than this go to a temporary file rather than memory.
FILE_UPLOAD_MAX_MEMORY_SIZE = 2 * 1024 * 1024
DATA_UPLOAD_MAX_MEMORY_SIZE = 10 * 1024 * 1024
# How deep objects and lists may nest in a JSON body or field (annotator/json_input.py): no body of the app nests
# past a dozen levels; deeper is a 400 on every JSON route (Python's parser itself stops near 1,000 with a
# RecursionError, which was a 500).
JSON_MAX_DEPTH = int(os.environ.get("JSON_MAX_DEPTH", 32))
# Imports (README, "Configuration"): an uploaded file larger than this is refused before it is
# stored; a sentence or a reference longer than these refuses the import, naming it. The real
# CogniBench and RefChecker samples peak at 806 characters per sentence and 6,270 per reference.
IMPORT_MAX_UPLOAD_BYTES = int(os.environ.get("IMPORT_MAX_UPLOAD_BYTES", 200 * 1000 * 1000))
IMPORT_MAX_SENTENCE_CHARS = int(os.environ.get("IMPORT_MAX_SENTENCE_CHARS", 5_000))
IMPORT_MAX_REFERENCE_CHARS = int(os.environ.get("IMPORT_MAX_REFERENCE_CHARS", 200_000))
# A response longer than this is refused before it is cut into units (Punkt takes ~2 s on 70,000 characters of
# one-word sentences, and stops with a time-out on 700,000); the real samples' longest response is 2,024.
IMPORT_MAX_RESPONSE_CHARS = int(os.environ.get("IMPORT_MAX_RESPONSE_CHARS", 50_000))
# A protocol document (README, "Configuration"; docs/protocols.md, "Limits"), on every route that takes one (the
# protocol page, the API, protocol_set, a JSONL header): at most this many characters (its text, and written as
# compact JSON: every annotation screen embeds it) and this deep a nesting. The shipped ones: under 10,000, 6 deep.
PROTOCOL_MAX_CHARS = int(os.environ.get("PROTOCOL_MAX_CHARS", 500_000))
PROTOCOL_MAX_DEPTH = int(os.environ.get("PROTOCOL_MAX_DEPTH", 12))
