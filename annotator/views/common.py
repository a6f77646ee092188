"""Helpers the HTML views of every feature share: the annotator's own assignment, the 400 answer to a malformed
request, the refusal of whole-project figures to someone blind in the project, and polled fragments."""

from functools import wraps

from django.contrib import messages
from django.contrib.auth.decorators import login_not_required
from django.contrib.auth.views import redirect_to_login
from django.http import Http404, HttpResponse, HttpResponseForbidden
from django.shortcuts import redirect, render
from django.urls import reverse

from ..access import BLIND_REPORT_MESSAGE, access_assignment, is_blind_in, role_in
from ..domain.csv_cells import csv_cell, csv_writer  # noqa: F401 (the views' one way to write CSV)
from ..forms.fields import error_text
from ..models import Assignment


def assignment_for(request, assignment_id) -> Assignment:
    """The user's own assignment in a project they still belong to (404 otherwise)."""
    assignment = access_assignment(request.user, assignment_id)
    if role_in(request.user, assignment.project) is None:
        raise Http404("No such assignment")
    return assignment


def back_to_screen(request, assignment, sentence, status: int, message: str) -> HttpResponse:
    """A panel action posted without htmx (no JavaScript): its outcome as a message, back to the annotation
    screen at the sentence it was about."""
    if message:
        (messages.error if status >= 400 else messages.info)(request, message)
    url = reverse("annotate", args=[assignment.pk])
    return redirect(f"{url}?sentence={sentence.pk}" if sentence else url)


def bad_request(request, form_or_message, *, back_url: str = "") -> HttpResponse:
    """400 with what was wrong: plain text for htmx (the page shows it in its status line), else a page."""
    message = form_or_message if isinstance(form_or_message, str) else error_text(form_or_message)
    if request.htmx:
        return HttpResponse(message, status=400, content_type="text/plain; charset=utf-8")
    return render(request, "errors/bad_request.html", {"message": message, "back_url": back_url}, status=400)


def blind_refusal(request, project, message=BLIND_REPORT_MESSAGE):
    """None, or the answer to a view of the whole project's gold (export, report, evaluation) asked by someone
    who holds an unsubmitted slot in it: the message on the project page (a 403 with it for htmx)."""
    if not is_blind_in(request.user, project):
        return None
    if not request.htmx:
        messages.error(request, message)
        return redirect("project_detail", slug=project.slug)
    return HttpResponseForbidden(message, content_type="text/plain; charset=utf-8")


def polled(view):
    """For the fragments htmx polls: after the session ends, answer 204 (nothing to swap) rather than
    letting the login redirect put a login page inside the navigation or a pane."""
    @login_not_required
    @wraps(view)
    def wrapped(request, *args, **kwargs):
        if not request.user.is_authenticated:
            if request.method in ("GET", "HEAD"):
                return HttpResponse(status=204)
            return redirect_to_login(request.get_full_path())
        return view(request, *args, **kwargs)
    return wrapped


PROTOCOL_CHANGED = ("A project lead changed the project's protocol after this page was opened, so its questions were "
                    "out of date: nothing was saved. The page now shows the current protocol; answer it again.")


def protocol_changed_answer(request, walked: str, protocol, back_url: str) -> HttpResponse | None:
    """None when the page walked ``protocol`` (or did not say which it walked); else the refusal: a 409 that
    reloads the page (htmx's ``HX-Refresh``) onto the current protocol, the reason said on the page it loads."""
    if not walked or walked == protocol.checksum:
        return None
    messages.warning(request, PROTOCOL_CHANGED)
    if not request.htmx:
        return redirect(back_url)
    response = HttpResponse(PROTOCOL_CHANGED, status=409, content_type="text/plain; charset=utf-8")
    response["HX-Refresh"] = "true"
    return response
