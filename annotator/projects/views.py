from django.shortcuts import render

from ..access import access_project
from .selectors import annotator_counts, project_list_for, project_progress


def home(request):
    return render(request, "annotator/home.html", {"projects": project_list_for(request.user)})


def project_detail(request, slug):
    project = access_project(request.user, slug)
    context = {
        "project": project,
        "progress": project_progress(project),
        "mine": annotator_counts(project, request.user),
    }
    return render(request, "annotator/project_detail.html", context)
