"""Issue 38, item 7: what a process computes once per protocol document (the loaded protocol, its reading,
the annotation screen's description, the label styles) is kept for the last ``CACHED_PROTOCOLS`` documents
only: a project whose lead saves version after version no longer grows every worker by each version
(docs/benchmarks.md, "Memory per protocol version", measures it)."""

import copy

import pytest
from django.test import Client
from django.urls import reverse
from rest_framework.test import APIClient

from annotator.domain.protocol import groups as protocol_groups
from annotator.domain.protocol.cache import CACHED_PROTOCOLS
from annotator.domain.protocol.document import load_shipped
from annotator.domain.vocabulary import Role
from annotator.projects import protocols
from annotator.templatetags import gold_tags
from annotator.work import page

from .factories import member
from .factories_workspace import annotators, claimed, project_with_turns

pytestmark = pytest.mark.django_db

CLINICAL = load_shipped("cognibench_clinical")


def test_new_protocol_versions_do_not_grow_the_per_process_caches_past_their_bound():
    project, _ = project_with_turns(1)
    annotator, = annotators(project, 1)
    assignment = claimed(project, annotator)
    lead, screen = APIClient(), Client()
    lead.force_login(member(project, Role.LEAD))
    screen.force_login(annotator)
    for number in range(CACHED_PROTOCOLS + 6):
        document = copy.deepcopy(CLINICAL.document)
        document["steps"][0]["question"] = f"Draft {number}: is it relevant?"  # a new version, a new checksum
        assert lead.put(f"/api/v1/projects/{project.slug}/protocol/", document, format="json").status_code == 200
        html = screen.get(reverse("annotate", args=[assignment.pk])).content.decode()
        assert f"Draft {number}: is it relevant?" in html  # the screen walks the version just saved
    caches = {"loaded": protocols._loaded, "readings": protocol_groups._BY_CHECKSUM,
              "descriptions": page._DESCRIPTIONS, "styles": gold_tags._STYLES}
    sizes = {name: len(cache) for name, cache in caches.items()}
    assert all(size <= CACHED_PROTOCOLS for size in sizes.values()), sizes
