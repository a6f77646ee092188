"""A lead's page for the project's protocol: pick a shipped one or upload / edit a document, with a live
preview of the tree that can be walked with the keys. Every refusal lists its problems by path; nothing is
saved unless the whole document (and its label mapping) holds."""

import json

from django.contrib import messages
from django.shortcuts import redirect, render
from django.views.decorators.http import require_http_methods, require_POST

from ..access import access_project_as_lead
from ..views.common import bad_request
from ..domain.protocol.document import PROTOCOLS_DIR, ProtocolDocumentError, load_protocol
from .forms import ProtocolForm, ProtocolPreviewForm, document_format
from .protocol_mapping import MAPPING_FIELD, mapping_rows
from .protocol_reading import read_protocol_text
from .protocol_services import protocol_set
from .protocols import protocol_for
from .selectors import project_has_annotations, protocol_versions


def _context(project, form, problems=None):
    current = protocol_for(project)
    frozen = project_has_annotations(project)
    return {
        "project": project, "form": form, "problems": problems or [], "current": current,
        "versions": protocol_versions(project), "frozen": frozen,
        "preview": _preview(current.describe(), [], mapping_rows(current, current) if frozen else None),
    }


@require_http_methods(["GET", "POST"])
def protocol_page(request, slug):
    project = access_project_as_lead(request.user, slug)
    if request.method == "GET":
        initial = {"document": json.dumps(protocol_for(project).document, indent=2, ensure_ascii=False)}
        return render(request, "projects/protocol.html", _context(project, ProtocolForm(initial=initial)))
    form = ProtocolForm(request.POST, request.FILES)
    if not form.is_valid():
        return render(request, "projects/protocol.html", _context(project, form), status=400)
    try:
        version = protocol_set(project, form.cleaned_data["parsed"], user=request.user,
                               label_mapping=form.cleaned_data["mapping"], chosen=True)
    except ProtocolDocumentError as refused:
        return render(request, "projects/protocol.html", _context(project, form, refused.problems), status=400)
    if version is None:
        messages.info(request, "The protocol is unchanged.")
    else:
        messages.success(request, f"Protocol {version.document['name']} v{version.document['version']} set "
                                  f"(project version {version.number}).")
    return redirect("project_protocol", slug=slug)


@require_POST
def protocol_preview(request, slug):
    """The preview partial of the document being edited: its tree to walk, or its problems."""
    project = access_project_as_lead(request.user, slug)
    form = ProtocolPreviewForm(request.POST)
    problems, description, rows = [], None, None
    if not form.is_valid():
        return bad_request(request, form)
    try:
        if form.cleaned_data["source"] == ProtocolForm.SHIPPED and form.cleaned_data["shipped"]:
            document = json.loads((PROTOCOLS_DIR / f"{form.cleaned_data['shipped']}.json").read_text())
        else:
            text = form.cleaned_data["document"] or "null"
            document = read_protocol_text(text, document_format(text, form.cleaned_data.get("document_format")))
        new = load_protocol(document)
        description = new.describe()
        if project_has_annotations(project):  # a new version: the lead says where each label's meaning carries over
            rows = mapping_rows(protocol_for(project), new)
    except ProtocolDocumentError as refused:  # unreadable text (ProtocolTextError) too
        problems = refused.problems
    return render(request, "projects/partials/protocol_preview.html", {"preview": _preview(description, problems, rows)})


def _preview(description, problems, mapping=None) -> dict:
    return {"description_json": json.dumps(description) if description else "", "problems": problems,
            "mapping": mapping, "mapping_field": MAPPING_FIELD}
