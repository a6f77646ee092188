"""Error pages. A database outage is answered with 503 and a message that says what happened.

Django calls ``handler500`` while the exception is being handled, so the
exception is at hand. When it is the database being unreachable (a restart, a
fail-over), the person is told that their last action was not saved and that
the page will retry (the annotation screen resends it with the same request id,
so it is applied once), instead of a bare "Server Error (500)". No database
query happens here: the template is rendered without the request's context
processors.
"""

import logging
import sys

from django.db import DatabaseError, InterfaceError, OperationalError
from django.http import HttpResponse
from django.template.loader import render_to_string
from django.views.defaults import server_error as default_server_error

logger = logging.getLogger(__name__)

RETRY_AFTER_SECONDS = 5


def is_database_unavailable(error) -> bool:
    """A connection problem (server gone, restarting, refusing connections), not a bad query."""
    if isinstance(error, (OperationalError, InterfaceError)):
        return True
    cause = getattr(error, "__cause__", None)
    return isinstance(error, DatabaseError) and isinstance(cause, (OperationalError, InterfaceError))


def server_error(request, *args, **kwargs):
    error = sys.exc_info()[1]
    if error is not None and is_database_unavailable(error):
        logger.warning("database unavailable while serving %s %s: %s", request.method, request.path,
                       type(error).__name__)
        html = render_to_string("errors/database_unavailable.html", {"retry_after": RETRY_AFTER_SECONDS})
        response = HttpResponse(html, status=503)
        response["Retry-After"] = str(RETRY_AFTER_SECONDS)
        return response
    return default_server_error(request, *args, **kwargs)
