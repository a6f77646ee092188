"""The lead's console: create a project, change its settings, manage its people and invite links, in the app
(no admin, no staff flag). Thin views: access getter, form, service, template."""

from django.conf import settings
from django.contrib import messages
from django.core.exceptions import ValidationError
from django.http import HttpResponseForbidden
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST

from ..access import access_project_as_lead, may_create_projects
from ..models import Membership, ProjectInvite
from ..views.common import bad_request
from . import services
from .console_forms import (ConfirmForm, InviteCreateForm, MemberAddForm, MemberRoleForm, ProjectCreateForm,
                    ProjectSettingsForm)
from .selectors import INVITES_AFTER_REMOVAL, invite_is_single_use, members_of, open_invites, removal_effects

NOT_ALLOWED_TO_CREATE = (
    "Creating projects is for people the site administrator allows to (the permission “Can add project”). "
    "Ask them, or ask a lead to add you to a project."
)


def _messages_of(error: ValidationError) -> str:
    return " ".join(error.messages)


def project_create(request):
    if not may_create_projects(request.user):
        return HttpResponseForbidden(NOT_ALLOWED_TO_CREATE, content_type="text/plain; charset=utf-8")
    form = ProjectCreateForm(request.POST or None, request.FILES or None)
    if request.method == "POST" and form.is_valid():
        try:
            project = services.project_create(creator=request.user, **form.cleaned_data)
        except ValidationError as error:
            for field, errors in error.message_dict.items():
                form.add_error(field if field in form.fields else None, errors)
        else:
            messages.success(request, f"Project “{project.name}” created; you lead it. Next: import its data.")
            return redirect("project_detail", slug=project.slug)
    status = 400 if form.is_bound else 200
    return render(request, "annotator/project_create.html", {"form": form}, status=status)


def project_settings(request, slug):
    project = access_project_as_lead(request.user, slug)
    form = ProjectSettingsForm(request.POST or None, instance=project)
    if request.method == "POST" and form.is_valid():
        changes = form.changes()
        try:
            services.project_update_settings(project, **changes)
        except ValidationError as error:
            for field, errors in error.message_dict.items():
                form.add_error(field if field in form.fields else None, errors)
        else:
            changed = ", ".join(str(form[name].label).lower() for name in changes) or "nothing changed"
            messages.success(request, f"Settings saved: {changed}.")
            return redirect("project_settings", slug=project.slug)
    status = 400 if form.is_bound else 200
    return render(request, "annotator/project_settings.html", {"project": project, "form": form}, status=status)


def people(request, slug):
    project = access_project_as_lead(request.user, slug)
    return _people_page(request, project)


def _people_page(request, project, *, add_form=None, invite_form=None, status=200):
    invites = list(open_invites(project))
    context = {
        "project": project,
        "members": [(membership, MemberRoleForm(initial={"role": membership.role},
                                                    auto_id=f"id_member_{membership.user_id}_%s"))
                    for membership in members_of(project)],
        "add_form": add_form or MemberAddForm(),
        "invite_form": invite_form or InviteCreateForm(),
        "invites": [(invite, request.build_absolute_uri(reverse("project_join", args=[invite.token])))
                    for invite in invites],
        "single_use_ids": {invite.pk for invite in invites if invite_is_single_use(invite)},
        "signup_allowed": settings.INVITE_SIGNUP,
    }
    return render(request, "annotator/people.html", context, status=status)


@require_POST
def member_add(request, slug):
    project = access_project_as_lead(request.user, slug)
    form = MemberAddForm(request.POST)
    if form.is_valid():
        try:
            membership = services.membership_add(project, form.cleaned_data["username"], form.cleaned_data["role"],
                                                 actor=request.user)
        except ValidationError as error:
            for field, errors in error.message_dict.items():
                form.add_error(field if field in form.fields else None, errors)
        else:
            messages.success(request, f"{membership.user.get_username()} joined as {membership.get_role_display().lower()}.")
            return redirect("project_people", slug=slug)
    return _people_page(request, project, add_form=form, status=400)


def _member(project, user_id) -> Membership:
    return get_object_or_404(Membership.objects.select_related("user"), project=project, user_id=user_id)


@require_POST
def member_role(request, slug, user_id):
    project = access_project_as_lead(request.user, slug)
    membership = _member(project, user_id)
    form = MemberRoleForm(request.POST)
    if not form.is_valid():
        return bad_request(request, form, back_url=reverse("project_people", args=[slug]))
    try:
        membership = services.membership_set_role(membership, form.cleaned_data["role"])
    except ValidationError as error:
        messages.error(request, _messages_of(error))
    else:
        messages.success(request, f"{membership.user.get_username()} is now {membership.get_role_display().lower()}.")
    return redirect("project_people", slug=slug)


def member_remove(request, slug, user_id):
    """GET: what removing this member does (their slots, their flags); POST: do it and say what was done."""
    project = access_project_as_lead(request.user, slug)
    membership = _member(project, user_id)
    if request.method == "POST":
        form = ConfirmForm(request.POST)
        if not form.is_valid():
            return bad_request(request, form, back_url=reverse("project_people", args=[slug]))
        try:
            effects = services.membership_remove(membership, actor=request.user)
        except ValidationError as error:
            messages.error(request, _messages_of(error))
        else:
            messages.success(request, f"Removed {effects.summary()}")
        return redirect("project_people", slug=slug)
    context = {"project": project, "membership": membership, "effects": removal_effects(membership),
               "form": ConfirmForm(), "invites_after_removal": INVITES_AFTER_REMOVAL,
               "open_invites": open_invites(project).count()}
    return render(request, "annotator/member_remove.html", context)


@require_POST
def invite_create(request, slug):
    project = access_project_as_lead(request.user, slug)
    form = InviteCreateForm(request.POST)
    if not form.is_valid():
        return _people_page(request, project, invite_form=form, status=400)
    invite, new = services.invite_create(project, role=form.cleaned_data["role"], days=form.cleaned_data["days"],
                                         actor=request.user, single_use=form.cleaned_data["single_use"])
    role, until = invite.get_role_display().lower(), f"{invite.expires_at:%Y-%m-%d}"
    if form.cleaned_data["single_use"]:
        messages.success(request, f"Invite link for one person made: the first to open it joins as {role} (until "
                                  f"{until}), and it then closes. Send it to that person only.")
    elif new:
        messages.success(request, f"Invite link made: whoever opens it joins as {role} (until {until}).")
    else:
        messages.info(request, f"An open link for {role}s until {until} exists already; it is the one below "
                               "(no second link was made).")
    return redirect(f"{reverse('project_people', args=[slug])}#invite-{invite.pk}")


@require_POST
def invite_revoke(request, slug, invite_id):
    project = access_project_as_lead(request.user, slug)
    invite = get_object_or_404(ProjectInvite, project=project, pk=invite_id)
    if not ConfirmForm(request.POST).is_valid():
        return bad_request(request, "Confirm the revocation.", back_url=reverse("project_people", args=[slug]))
    services.invite_revoke(invite)
    messages.success(request, "Invite link revoked: it no longer lets anyone join.")
    return redirect("project_people", slug=slug)
