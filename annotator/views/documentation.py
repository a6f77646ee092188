"""The documentation a lead's forms point to, served in the app from the same files the repository keeps
(docs/protocols.md, docs/languages.md): a lead on a server has no repository to open them in."""

from functools import lru_cache
from pathlib import Path

import bleach
import markdown
from django.conf import settings
from django.contrib.auth.decorators import login_required
from django.http import Http404
from django.shortcuts import render
from django.utils.safestring import mark_safe
from django.views.decorators.http import require_safe

PROTOCOL_FORMAT = Path(settings.BASE_DIR) / "docs" / "protocols.md"
LANGUAGES = Path(settings.BASE_DIR) / "docs" / "languages.md"
# What a rendered page of ours may hold: the file is the project's own, and it is cleaned all the same, so a
# document edited by a careless hand never runs a script on the site.
ALLOWED_TAGS = sorted(bleach.sanitizer.ALLOWED_TAGS | {
    "p", "pre", "h1", "h2", "h3", "h4", "table", "thead", "tbody", "tr", "th", "td", "br", "hr", "dl", "dt", "dd"})
ALLOWED_ATTRIBUTES = {"a": ["href", "title"], "th": ["align"], "td": ["align"], "h1": ["id"], "h2": ["id"], "h3": ["id"],
                      "h4": ["id"]}


@lru_cache(maxsize=2)
def _rendered(path: Path, modified: float) -> str:
    html = markdown.markdown(path.read_text(encoding="utf-8"), extensions=["tables", "fenced_code", "toc"])
    return bleach.clean(html, tags=ALLOWED_TAGS, attributes=ALLOWED_ATTRIBUTES, protocols=["http", "https"])


def _document_page(request, path: Path, title: str, testid: str):
    """A file of docs/ as a page, rendered again whenever the file changes."""
    try:
        document = _rendered(path, path.stat().st_mtime)
    except FileNotFoundError:  # a deployment that left docs/ out
        raise Http404("This site was installed without its docs/ folder.") from None
    return render(request, "help/document.html", {
        "document": mark_safe(document), "title": title, "source": f"docs/{path.name}", "testid": testid})


@require_safe
@login_required
def protocol_format(request):
    return _document_page(request, PROTOCOL_FORMAT, "The protocol format", "protocol-format")


@require_safe
@login_required
def languages(request):
    """How each language is cut into units: the page the language fields point to."""
    return _document_page(request, LANGUAGES, "Languages", "languages")
