"""The database going away answers 503 with a clear message, and the app recovers by itself when it is back.

The outage is real: the connection settings point at a database that cannot be
reached (PostgreSQL: a closed port; SQLite: a file that cannot be opened), the
connection is reopened, and the driver's own error goes through the app.
bench/load.py --fault db-restart does the same with a real PostgreSQL restart
under load.
"""

import pytest
from django.db import connection
from django.test import Client
from django.urls import reverse

from tests.factories import ProjectFactory, member

pytestmark = pytest.mark.django_db(transaction=True)


class Unreachable:
    def __enter__(self):
        self.saved = dict(connection.settings_dict)
        connection.close()
        if connection.vendor == "sqlite":
            connection.settings_dict["NAME"] = "/nonexistent-directory/for-the-outage-test/db.sqlite3"
        else:
            connection.settings_dict["HOST"] = "127.0.0.1"
            connection.settings_dict["PORT"] = "1"
        return self

    def __exit__(self, *exc):
        connection.close()
        connection.settings_dict.clear()
        connection.settings_dict.update(self.saved)


def test_a_database_outage_is_a_503_with_a_message_and_the_next_request_works(settings):
    settings.DEBUG = False
    project = ProjectFactory()
    user = member(project)
    client = Client(raise_request_exception=False)
    client.force_login(user)
    url = reverse("project_detail", args=[project.slug])
    assert client.get(url).status_code == 200
    with Unreachable():
        for response in (client.get(url), client.post(url, HTTP_HX_REQUEST="true")):
            assert response.status_code == 503
            assert response["Retry-After"] == "5"
            text = response.content.decode()
            assert "The database is not reachable for a moment" in text and "not saved yet" in text
    # Back: no restart of anything, the next request reconnects.
    assert client.get(url).status_code == 200


def test_other_server_errors_keep_the_plain_500_page(settings):
    settings.DEBUG = False
    from django.test import RequestFactory

    from annotator.views import errors

    try:
        raise RuntimeError("a bug")
    except RuntimeError:
        response = errors.server_error(RequestFactory().get("/"))
    assert response.status_code == 500
