"""API tokens in the admin: who has one and since when, never the key itself.

Django REST framework's own TokenAdmin lists every user's key in clear, so any
staff member could act as anyone through the API. Here the list shows only the
first characters (enough to tell tokens apart); a user sees or regenerates
their own key on the "API token" page. A staff member who is not a superuser sees
only their own token here: project roles grant nothing over other people's accounts.

A token's ``__str__`` was its key, and the admin writes ``str(obj)`` into the
change page's title, breadcrumb and heading, the history page, the delete
confirmation (a user's deletion lists their token) and every LogEntry's
``object_repr``. Masking ``__str__`` itself covers all of them, and any admin
page added later. Nothing else reads it: the API and the token page use ``key``.
"""

from django.contrib import admin
from rest_framework.authtoken.admin import TokenAdmin
from rest_framework.authtoken.models import Token, TokenProxy


def masked_key(key):
    return f"{key[:4]}…" if key else ""


def _token_str(token):
    return f"token {masked_key(token.key)}"


Token.__str__ = _token_str  # TokenProxy inherits it

if admin.site.is_registered(TokenProxy):
    admin.site.unregister(TokenProxy)


@admin.register(TokenProxy)
class MaskedTokenAdmin(TokenAdmin):
    list_display = ("masked_key", "user", "created")

    def get_queryset(self, request):
        queryset = super().get_queryset(request)
        return queryset if request.user.is_superuser else queryset.filter(user=request.user)

    @admin.display(description="key")
    def masked_key(self, token):
        return masked_key(token.key)
