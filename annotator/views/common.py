"""Helpers the HTML views share: the annotator's own assignment, and the 400 answer to a malformed request."""

from django.http import Http404, HttpResponse
from django.shortcuts import render

from ..access import access_assignment, role_in
from ..forms.fields import error_text
from ..models import Assignment


def assignment_for(request, assignment_id) -> Assignment:
    """The user's own assignment in a project they still belong to (404 otherwise)."""
    assignment = access_assignment(request.user, assignment_id)
    if role_in(request.user, assignment.project) is None:
        raise Http404("No such assignment")
    return assignment


def bad_request(request, form_or_message, *, back_url: str = "") -> HttpResponse:
    """400 with what was wrong: plain text for htmx (the page shows it in its status line), else a page."""
    message = form_or_message if isinstance(form_or_message, str) else error_text(form_or_message)
    if request.htmx:
        return HttpResponse(message, status=400, content_type="text/plain; charset=utf-8")
    return render(request, "errors/bad_request.html", {"message": message, "back_url": back_url}, status=400)
