"""The site administrator's page "Who may create projects" (projects/creators.py): thin views."""

from django.contrib import messages
from django.contrib.auth import get_user_model
from django.core.exceptions import PermissionDenied, ValidationError
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST

from ..views.common import bad_request
from .console_forms import ConfirmForm, CreatorGrantForm
from .creators import ADMIN_LABEL, may_manage_creators, project_creator_grant, project_creator_revoke, project_creators


def _refuse_unless_administrator(user):
    if not may_manage_creators(user):
        raise PermissionDenied("For site administrators (staff who may change accounts).")


def creators_page(request):
    _refuse_unless_administrator(request.user)
    form = CreatorGrantForm(request.POST if request.method == "POST" else None)
    if request.method == "POST" and form.is_valid():
        try:
            user = project_creator_grant(form.cleaned_data["username"])
        except ValidationError as error:
            for field, errors in error.message_dict.items():
                form.add_error(field if field in form.fields else None, errors)
        else:
            messages.success(request, f"{user.get_username()} may now create projects.")
            return redirect("project_creators")
    context = {"creators": project_creators(), "form": form, "admin_label": ADMIN_LABEL,
               "revoke_form": ConfirmForm()}
    return render(request, "annotator/project_creators.html", context, status=400 if form.is_bound else 200)


@require_POST
def creator_revoke(request, user_id):
    _refuse_unless_administrator(request.user)
    user = get_object_or_404(get_user_model(), pk=user_id)
    if not ConfirmForm(request.POST).is_valid():
        return bad_request(request, "Confirm the revocation.", back_url=reverse("project_creators"))
    still = project_creator_revoke(user)
    if still:
        messages.info(request, f"Revoked on {user.get_username()}'s account; they still may through the group "
                               f"{', '.join(still)} (change the group in the admin).")
    elif user.is_superuser:
        messages.info(request, f"Revoked on {user.get_username()}'s account; as a superuser they still may.")
    else:
        messages.success(request, f"{user.get_username()} may no longer create projects (their projects stay).")
    return redirect("project_creators")
