"""The "API token" page of the user menu: see, create, regenerate or revoke your token."""

from django.contrib import messages
from django.db import transaction
from django.shortcuts import redirect, render
from django.views.decorators.http import require_http_methods
from rest_framework.authtoken.models import Token


@require_http_methods(["GET", "POST"])
def token_page(request):
    if request.method == "POST":
        action = request.POST.get("action")
        with transaction.atomic():
            if action in ("create", "regenerate"):
                Token.objects.filter(user=request.user).delete()
                Token.objects.create(user=request.user)
                messages.success(request, "A new API token was created; the old one, if any, no longer works.")
            elif action == "revoke":
                Token.objects.filter(user=request.user).delete()
                messages.success(request, "Your API token was revoked.")
            else:
                messages.error(request, "Unknown action.")
        return redirect("api:token-page")
    token = Token.objects.filter(user=request.user).first()
    return render(request, "api/token.html", {"token": token})
