"""The app's URLs plus ``POST /floor/<assignment>/``: the least a decision request can do in Django.

It authenticates the session's user (session + user queries, CSRF, every
middleware of the app), bumps the assignment's version and writes one audit
row in a transaction, and answers a one-line fragment. No protocol, no screen
state, no template: what any implementation of the decision endpoint on this
stack pays at the least.

``FLOOR_EXTRA_CPU_MS`` (``bench/load.py --floor --floor-extra-ms N``) makes each
request also burn N ms of this process's CPU: the floor plus a known cost, so
that a few runs trace how the latency grows with the CPU a decision costs.
"""

import os
import time

from django.db import transaction
from django.db.models import F
from django.http import Http404, HttpResponse
from django.urls import path
from django.views.decorators.http import require_POST

from annotator.models import AnnotationEvent, Assignment
from config.urls import urlpatterns as app_urlpatterns

EXTRA_CPU_SECONDS = float(os.environ.get("FLOOR_EXTRA_CPU_MS", "0")) / 1000


def _burn_cpu(seconds: float) -> None:
    until = time.process_time() + seconds
    while time.process_time() < until:
        pass


@require_POST
def floor(request, assignment_id):
    if EXTRA_CPU_SECONDS:
        _burn_cpu(EXTRA_CPU_SECONDS)
    with transaction.atomic():
        if not Assignment.objects.filter(pk=assignment_id, annotator=request.user).update(version=F("version") + 1):
            raise Http404("No such assignment")
        AnnotationEvent.objects.create(assignment_id=assignment_id, actor=request.user, action="note",
                                       new={"n": request.POST.get("n", "")}, request_id=request.POST.get("request_id", ""))
    return HttpResponse(f'<div id="decision-panel" data-version="0">{assignment_id}</div>')


urlpatterns = [path("floor/<int:assignment_id>/", floor), *app_urlpatterns]
