"""API tokens in the admin: who has one and since when, never the key itself.

Django REST framework's own TokenAdmin lists every user's key in clear, so any
staff member could act as anyone through the API. Here the list shows only the
first characters (enough to tell tokens apart); a user sees or regenerates
their own key on the "API token" page.
"""

from django.contrib import admin
from rest_framework.authtoken.admin import TokenAdmin
from rest_framework.authtoken.models import TokenProxy

if admin.site.is_registered(TokenProxy):
    admin.site.unregister(TokenProxy)


@admin.register(TokenProxy)
class MaskedTokenAdmin(TokenAdmin):
    list_display = ("masked_key", "user", "created")

    @admin.display(description="key")
    def masked_key(self, token):
        return f"{token.key[:4]}…"
