"""The management commands as the tests run them: a command's output, a project's gold JSONL export read back."""

import json
from io import StringIO

from django.core.management import call_command


def run(*args) -> str:
    """What the command ``args`` writes to its output (its errors are not shown)."""
    out = StringIO()
    call_command(*args, stdout=out, stderr=StringIO())
    return out.getvalue()


def export(slug, path) -> list[dict]:
    """Export project ``slug``'s gold as JSONL to ``path``; its lines, read back."""
    run("export_gold", "--project", slug, "--format", "jsonl", "--out", str(path))
    return [json.loads(line) for line in path.read_text().splitlines()]
