"""Invite links, as the person who opens one sees them: signed in, a button that joins; signed out, the project
and the role, and a way in: sign in, or (unless the site turned it off) create an account, joining in one step.

The token travels in one URL only, the link itself: ``/join/<token>/`` puts it in the session and redirects to
``/join/``, so it is not in the address bar, in the login redirect's ``next``, in the forms' actions, or in
a Referer (the link's own answer sends none). What an invite page shows is the project's name and the role, nothing else.
"""

from django.conf import settings
from django.contrib import messages
from django.contrib.auth import login
from django.contrib.auth.decorators import login_not_required
from django.contrib.auth.forms import AuthenticationForm
from django.core.exceptions import PermissionDenied, ValidationError
from django.http import Http404
from django.shortcuts import redirect, render

from ..views.common import bad_request
from . import services
from .console_forms import ConfirmForm, InviteSignUpForm
from .selectors import INVITE_CLOSED, invite_by_token, invite_is_open
from .signup_limit import signup_attempt_take

SESSION_KEY = "invite_token"
FORM_FIELDS = {"username", "password"}  # the service's error keys that name a field of the sign-up form


def _no_referrer(response):
    # Kept by SecurityMiddleware, which only fills the site's policy (same-origin) where a response has none.
    # Only here: a page under "no-referrer" posts its forms with "Origin: null", which Django's CSRF check
    # refuses; /join/ holds no token, and keeps the site's policy.
    response["Referrer-Policy"] = "no-referrer"
    return response


@login_not_required
def project_join(request, token):
    """The link itself: remember which invite was opened, then show it at an address without the token."""
    invite = invite_by_token(token)
    if invite is None:
        raise Http404("No such invite")
    request.session[SESSION_KEY] = invite.token
    return _no_referrer(redirect("project_invite"))


def _joined(request, invite, membership, new):
    request.session.pop(SESSION_KEY, None)
    role = membership.get_role_display().lower()
    if new:
        messages.success(request, f"You joined {invite.project.name} as {role}.")
    else:
        messages.info(request, f"You are already in {invite.project.name} ({role}); your role is unchanged.")
    return redirect("project_detail", slug=invite.project.slug)


def _accept(request, invite):
    try:
        membership, new = services.invite_accept(invite, request.user)
    except ValidationError as error:
        messages.error(request, " ".join(error.messages))
        return redirect("home")
    return _joined(request, invite, membership, new)


@login_not_required
def invite_page(request):
    """The invite opened in this browser: join it (signed in), or sign in / sign up and join (signed out)."""
    invite = invite_by_token(request.session.get(SESSION_KEY, ""))
    if invite is None:
        raise Http404("No invite link was opened in this browser")
    is_open = invite_is_open(invite)
    if request.user.is_authenticated:
        if request.method == "POST":
            if not ConfirmForm(request.POST).is_valid():
                return bad_request(request, "Confirm that you join.")
            return _accept(request, invite)
        return _page(request, invite, is_open)
    signin_form = AuthenticationForm(request)
    signup_form = InviteSignUpForm(prefix="signup") if settings.INVITE_SIGNUP else None
    status, wait = 200, 0
    if request.method == "POST" and is_open:
        action = request.POST.get("action")
        if action == "signin":
            # authenticate() inside the form: django-axes counts a failure and locks out as on the login page.
            signin_form = AuthenticationForm(request, data=request.POST)
            if signin_form.is_valid():
                login(request, signin_form.get_user())
                return _accept(request, invite)
            status = 400
        elif action == "signup" and signup_form is not None:
            wait = signup_attempt_take(request)
            if wait:
                status = 429
            else:
                signup_form = InviteSignUpForm(request.POST, prefix="signup")
                if signup_form.is_valid():
                    response = _sign_up(request, invite, signup_form)
                    if response is not None:
                        return response
                status = 400
        else:
            return bad_request(request, "Choose to sign in or to create an account.")
    response = _page(request, invite, is_open, signin_form=signin_form, signup_form=signup_form, wait=wait,
                     status=status)
    if wait:
        response["Retry-After"] = str(wait)
    return response


def _sign_up(request, invite, form):
    try:
        user, membership = services.account_create_with_invite(
            invite, username=form.cleaned_data["username"], password=form.cleaned_data["password1"])
    except PermissionDenied as error:
        form.add_error(None, str(error))
        return None
    except ValidationError as error:
        by_field = error.message_dict if hasattr(error, "error_dict") else {None: error.messages}
        for field, errors in by_field.items():
            form.add_error({"password": "password2"}.get(field, field) if field in FORM_FIELDS else None, errors)
        return None
    login(request, user, backend="annotator.auth_backend.SessionUserBackend")
    return _joined(request, invite, membership, True)


def _page(request, invite, is_open, *, signin_form=None, signup_form=None, wait=0, status=200):
    minutes = max(1, -(-wait // 60)) if wait else 0
    context = {"project_name": invite.project.name, "role": invite.get_role_display().lower(), "open": is_open,
               "form": ConfirmForm(), "signin_form": signin_form, "signup_form": signup_form,
               "wait_minutes": minutes, "closed_message": INVITE_CLOSED}
    return render(request, "annotator/project_join.html", context, status=status)
