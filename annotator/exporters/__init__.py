"""Serialising a project's gold: the project's JSONL and CogniBench's labels.json.

Both exporters are generators of text pieces, so the command writes them to a
file and the view streams them to the browser without holding the export in
memory.
"""

from .cognibench import cognibench_pieces
from .jsonl import jsonl_lines

FORMATS = {"jsonl": jsonl_lines, "cognibench": cognibench_pieces}
FILENAMES = {"jsonl": "{slug}-gold.jsonl", "cognibench": "{slug}-labels.json"}
CONTENT_TYPES = {"jsonl": "application/x-ndjson; charset=utf-8", "cognibench": "application/json; charset=utf-8"}
