"""A project's LLM endpoints page (its leads): add, edit, remove an endpoint, test it (a worker runs the probe;
the page polls its result with htmx)."""

from django.contrib import messages
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_POST

from annotator.access import access_project_as_lead

from autolabel.endpoints import selectors, services
from autolabel.endpoints.forms import EndpointForm
from autolabel.models import EndpointTest


def endpoint_list(request, slug):
    project = access_project_as_lead(request.user, slug)
    form = EndpointForm(request.POST or None, project=project)
    if request.method == "POST":
        if form.is_valid():
            endpoint = services.endpoint_save(form, project)
            messages.success(request, f"Endpoint {endpoint.name} added.")
            return redirect("autolabel:endpoint_list", slug=project.slug)
    return render(request, "autolabel/endpoints.html", {
        "project": project, "form": form, **selectors.endpoints_page(project),
    }, status=400 if form.errors else 200)


def endpoint_edit(request, slug, endpoint_id):
    project = access_project_as_lead(request.user, slug)
    endpoint = selectors.endpoint_of_project(project, endpoint_id)
    form = EndpointForm(request.POST or None, instance=endpoint, project=project)
    if request.method == "POST" and form.is_valid():
        services.endpoint_save(form, project)
        messages.success(request, f"Endpoint {endpoint.name} saved.")
        return redirect("autolabel:endpoint_list", slug=project.slug)
    return render(request, "autolabel/endpoint_edit.html", {"project": project, "endpoint": endpoint, "form": form},
                  status=400 if form.errors else 200)


@require_POST
def endpoint_delete(request, slug, endpoint_id):
    project = access_project_as_lead(request.user, slug)
    endpoint = selectors.endpoint_of_project(project, endpoint_id)
    try:
        services.endpoint_delete(endpoint)
    except services.EndpointError as error:
        messages.error(request, str(error))
    else:
        messages.success(request, f"Endpoint {endpoint.name} removed.")
    return redirect("autolabel:endpoint_list", slug=project.slug)


@require_POST
def endpoint_test(request, slug, endpoint_id):
    project = access_project_as_lead(request.user, slug)
    endpoint = selectors.endpoint_usable_by(project, endpoint_id)
    test = services.endpoint_test_start(endpoint, request.user)
    if request.htmx:
        return render(request, "autolabel/partials/endpoint_test.html", {"project": project, "test": test})
    return redirect("autolabel:endpoint_list", slug=project.slug)


def endpoint_test_result(request, slug, test_id):
    """The test's result, polled by the page every second until it is finished."""
    project = access_project_as_lead(request.user, slug)
    test = get_object_or_404(EndpointTest.objects.select_related("profile"), pk=test_id,
                             profile__in=selectors.endpoints_usable_by(project))
    return render(request, "autolabel/partials/endpoint_test.html", {"project": project, "test": test})
