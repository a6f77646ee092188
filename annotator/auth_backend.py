"""Django's model backend, with the user of each request read by a statement written once.

Every request of a logged-in user loads its user row; building that query with
the ORM was a tenth of the web server's CPU in a decision request (bench/load.py
under py-spy, docs/benchmarks.md). Logging in, permissions and everything else
are Django's own.
"""

from django.contrib.auth import get_user_model
from django.contrib.auth.backends import ModelBackend
from django.core.exceptions import PermissionDenied

from .selectors.joined import JoinedSelect


_USER = JoinedSelect(get_user_model(), "u", joins=[], extra_columns=[], where="u.id = %s")


class SessionUserBackend(ModelBackend):
    def authenticate(self, request, username=None, password=None, **kwargs):
        user = super().authenticate(request, username=username, password=password, **kwargs)
        if user is None:
            # Stop here: the ModelBackend listed after this one (settings) is there for sessions started
            # before this backend existed, and would check the password a second time.
            raise PermissionDenied
        return user

    def get_user(self, user_id):
        try:
            found = _USER.fetch_one([int(user_id)])
        except (TypeError, ValueError, OverflowError):
            return None
        if found is None:
            return None
        user = found[0]
        return user if self.user_can_authenticate(user) else None
