"""Helpers the HTML views of every feature share: the annotator's own assignment, the 400 answer to a malformed
request, the refusal of whole-project figures to someone blind in the project, and polled fragments."""

import csv
import re
from functools import wraps

from django.contrib import messages
from django.contrib.auth.decorators import login_not_required
from django.contrib.auth.views import redirect_to_login
from django.http import Http404, HttpResponse, HttpResponseForbidden
from django.shortcuts import redirect, render
from django.urls import reverse

from ..access import BLIND_REPORT_MESSAGE, access_assignment, is_blind_in, role_in
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


# What a spreadsheet may read as the start of a formula, and the separators it may split a CSV line on
# (a comma, or a semicolon, tab or bar depending on the locale and the import dialog): a trigger right after
# any of them starts a cell of its own when the line is split there. A spreadsheet skips the line breaks,
# spaces and control characters a cell starts with (issue 38, item 10: "\n=1+1" ran as a formula), so the
# trigger is the first character after them; a tab or carriage return is a trigger of its own.
FORMULA_STARTS = "=+-@"
SPREADSHEET_SEPARATORS = ",;\t|"
_FORMULA_AFTER_SEPARATOR = re.compile(
    rf"(?:^|[{re.escape(SPREADSHEET_SEPARATORS)}])"
    rf"(?:[\s\x00-\x1f\x7f]*[{re.escape(FORMULA_STARTS)}]|[ ]*[\t\r])"
)


def csv_cell(value):
    """A CSV cell: text that a spreadsheet could run as a formula, at its start or after any separator a
    spreadsheet may split on, gets a leading apostrophe; `csv_writer` quotes every text cell, so the cell
    stays one cell whatever the separator (names and notes come from imported data). A list is one cell of
    its items joined by "|"."""
    if value is None:
        return ""
    if isinstance(value, (list, tuple)):
        # A multiple step's answers (a path value that is a list) are one cell: its answers joined by "|" in the
        # step's order (answer values are identifiers, so none holds a "|"); guarded below like any text.
        value = "|".join("" if item is None else str(item) for item in value)
    if isinstance(value, str) and _FORMULA_AFTER_SEPARATOR.search(value):
        return "'" + value
    return value


class _GuardedWriter:
    def __init__(self, stream):
        self._writer = csv.writer(stream, quoting=csv.QUOTE_NONNUMERIC)

    def writerow(self, row):
        return self._writer.writerow([csv_cell(value) for value in row])


def csv_writer(stream):
    """The one way to write CSV for a download: every cell through `csv_cell`, every text cell quoted (a
    spreadsheet splitting on `;` or `|` keeps a quoted cell whole), numbers left bare."""
    return _GuardedWriter(stream)


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
