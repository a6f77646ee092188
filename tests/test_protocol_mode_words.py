"""The protocol mode is worded for any protocol: no protocol's name in it, and the number of labels the
project's own protocol has where the independent mode is shown."""

import pytest
from django.test import Client

from annotator.domain.protocol.document import load_shipped
from annotator.domain.vocabulary import ProtocolMode, Role
from annotator.projects.protocol_services import protocol_set
from tests.factories import ProjectFactory, member

pytestmark = pytest.mark.django_db


def page(project, path=""):
    client = Client()
    client.force_login(member(project, Role.LEAD))
    return client.get(f"/p/{project.slug}/{path}").content.decode()


def test_the_modes_name_no_protocol():
    for mode in ProtocolMode:
        assert "CogniBench" not in mode.label and "seven" not in mode.label


def test_the_independent_mode_counts_the_labels_of_the_projects_protocol():
    project = ProjectFactory(protocol_mode=ProtocolMode.INDEPENDENT)
    assert "Independent: pick one of 7 labels at once" in page(project)
    protocol_set(project, load_shipped("cognibench_clinical").document)
    project.refresh_from_db()
    assert "Independent: pick one of 8 labels at once" in page(project)


def test_the_sequential_mode_and_the_settings_form_use_the_new_words():
    project = ProjectFactory(protocol_mode=ProtocolMode.SEQUENTIAL)
    assert "Sequential: the protocol&#x27;s questions, one at a time" in page(project)
    settings = page(project, "settings/")
    assert "Independent: pick the final label at once" in settings and "seven categories" not in settings
