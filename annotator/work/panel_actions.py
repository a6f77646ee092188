"""The one dispatcher of the annotation screen's panel actions (the decision panel's, ``work.views.act``, and
the claims panels', ``claims.views.act``): the annotator's own assignment → the action's form → its service
→ the panel the screen swaps in (htmx), or back to the screen with a message (no JavaScript).

What differs between the panels is passed in: the forms of the actions, which need a sentence of the turn,
the service an action calls and the panel it answers with. A stale version is a 409 and a refused write a
422, each shown in the panel; a malformed form is a 400 naming the field.
"""

from collections.abc import Callable, Mapping

from django.http import Http404, HttpResponse
from django.urls import reverse

from ..forms.fields import error_text
from ..views.common import assignment_for, back_to_screen, bad_request
from .write import AnnotationError, VersionConflict
from ..projects.protocols import protocol_for_assignment


def panel_act(request, assignment_id, action: str, *, forms: Mapping[str, type], needs_sentence: Callable,
              find_sentence: Callable, perform: Callable, render_panel: Callable) -> HttpResponse:
    """One change to the annotator's assignment from a panel of the screen.

    ``perform(request, assignment, sentence, action, form)`` returns ``(outcome, message)``, or an
    ``HttpResponse`` that answers the request as it is (a redirect after submit, a 204);
    ``render_panel(request, assignment, action, sentence, outcome, status, message)`` answers htmx.
    """
    if action not in forms:
        raise Http404("No such action")
    assignment = assignment_for(request, assignment_id)
    # Label, step and answer fields take their choices from the slot's protocol.
    form = forms[action](request.POST, protocol=protocol_for_assignment(assignment))
    form.is_valid()
    sentence = None
    if needs_sentence(action):
        if "sentence" in form.errors:
            return bad_request(request, form, back_url=reverse("annotate", args=[assignment.pk]))
        sentence = find_sentence(assignment, form.cleaned_data["sentence"])
        if sentence is None:
            raise Http404("No such sentence in this turn")
    if form.errors:
        if not request.htmx:
            url = reverse("annotate", args=[assignment.pk])
            return bad_request(request, form, back_url=f"{url}?sentence={sentence.pk}" if sentence else url)
        # The screen swaps the panel it gets back: the same panel, with what was wrong.
        return render_panel(request, assignment, action, sentence, None, 400, error_text(form))
    status, outcome = 200, None
    try:
        done = perform(request, assignment, sentence, action, form)
        if isinstance(done, HttpResponse):
            return done
        outcome, message = done
        assignment = _keep_loaded(outcome.assignment, assignment)
    except VersionConflict as conflict:
        status, message = 409, str(conflict)
        assignment = assignment_for(request, assignment_id)
    except AnnotationError as error:
        status, message = 422, str(error)
        assignment = assignment_for(request, assignment_id)
    if not request.htmx:
        return back_to_screen(request, assignment, sentence, status, message)
    return render_panel(request, assignment, action, sentence, outcome, status, message)


def _keep_loaded(fresh, loaded):
    """The saved assignment with the project, turn and dialogue already fetched for this request."""
    fresh.project = loaded.project
    fresh.turn = loaded.turn
    return fresh
