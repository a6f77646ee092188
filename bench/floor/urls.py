"""The app's URLs plus ``POST /floor/<assignment>/``: the least a decision request can do in Django.

It authenticates the session's user (session + user queries, CSRF, every
middleware of the app), bumps the assignment's version and writes one audit
row in a transaction, and answers a one-line fragment. No protocol, no screen
state, no template: what any implementation of the decision endpoint on this
stack pays at the least.
"""

from django.db import transaction
from django.db.models import F
from django.http import Http404, HttpResponse
from django.urls import path
from django.views.decorators.http import require_POST

from annotator.models import AnnotationEvent, Assignment
from annotator.urls import urlpatterns as app_urlpatterns


@require_POST
def floor(request, assignment_id):
    with transaction.atomic():
        if not Assignment.objects.filter(pk=assignment_id, annotator=request.user).update(version=F("version") + 1):
            raise Http404("No such assignment")
        AnnotationEvent.objects.create(assignment_id=assignment_id, actor=request.user, action="note",
                                       new={"n": request.POST.get("n", "")}, request_id=request.POST.get("request_id", ""))
    return HttpResponse(f'<div id="decision-panel" data-version="0">{assignment_id}</div>')


urlpatterns = [path("floor/<int:assignment_id>/", floor), *app_urlpatterns]
