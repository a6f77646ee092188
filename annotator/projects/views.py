from django.shortcuts import render

from ..access import access_project, is_lead, may_create_projects
from ..corpus.units.selectors import units_to_review
from .creators import ADMIN_LABEL, may_manage_creators
from .selectors import annotator_counts, leads_any_project, project_list_for, project_progress, setup_steps


def home(request):
    projects = project_list_for(request.user)
    may_create = may_create_projects(request.user)
    context = {"projects": projects, "may_create": may_create,
               "may_manage_creators": may_manage_creators(request.user),
               # A lead who may not create projects is told who allows it and how, rather than finding no button.
               "ask_to_create": not may_create and leads_any_project(request.user),
               "creators_admin_label": ADMIN_LABEL}
    return render(request, "annotator/home.html", context)


def project_detail(request, slug):
    project = access_project(request.user, slug)
    progress = project_progress(project)
    lead = is_lead(request.user, project)
    units_review = units_to_review(project) if lead and progress["turns"] else ([], 0)
    context = {
        "project": project,
        "progress": progress,
        "mine": annotator_counts(project, request.user),
        "steps": setup_steps(project, progress, units_review) if lead else None,
    }
    return render(request, "annotator/project_detail.html", context)
