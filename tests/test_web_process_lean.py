"""A web process that serves the annotation screen loads none of the heavy libraries (issue 49).

NumPy, SciPy, scikit-learn and NLTK serve no page: the learned judge, the reports and cutting English text import
them when a request needs them. Loaded at start-up they cost each web worker ~37 MB (docs/benchmarks.md, "Issue 49").
The check runs in a fresh process, started as gunicorn starts a worker (``config.wsgi``), on the test database.
"""

import json
import os
import subprocess
import sys
from pathlib import Path

from annotator.domain.vocabulary import Role
from tests.conftest import database_url_for_worker
from tests.factories import AssignmentFactory, member
from tests.factories_claims import ClaimTripletFactory
from tests.factories_workspace import NO_PASSWORD, project_with_turns

ROOT = Path(__file__).resolve().parent.parent
# The modules the URLconf reads import NumPy in the functions that compute (the reports, the learned judge, the
# faithfulness report, the job comparison); krippendorff is imported where alpha is computed.
MUST_NOT_LOAD = ("numpy", "scipy", "sklearn", "nltk", "krippendorff")

SERVE_THE_SCREEN = """
import json, sys
from config.wsgi import application  # django.setup(), as a gunicorn worker does
from django.contrib.auth import get_user_model
from django.test import Client
from django.test.utils import setup_test_environment
setup_test_environment()  # the test client's host allowed, as under pytest
client = Client()
client.force_login(get_user_model().objects.get(pk=int(sys.argv[1])))
pages = [client.get(f"/a/{sys.argv[2]}/"), client.get(f"/p/{sys.argv[3]}/work/")]
print(json.dumps({"status": [page.status_code for page in pages],
                  "screen": pages[0].content.decode(),
                  "loaded": sorted(name for name in %r if name in sys.modules)}))
""" % (MUST_NOT_LOAD,)


def test_serving_the_annotation_screen_loads_no_numpy_scipy_sklearn_nltk_or_krippendorff(transactional_db):
    # The finer views on: the screen's triplet panel and severity / error type panels are served too.
    project, (turn,) = project_with_turns(1, enable_triplets=True, enable_severity=True, enable_error_types=True)
    ClaimTripletFactory(turn=turn, head="Amazon", relation="flows through", tail="Brazil")
    annotator = member(project, Role.ANNOTATOR, password=NO_PASSWORD)
    assignment = AssignmentFactory(turn=turn, annotator=annotator)
    env = {**os.environ, "DATABASE_URL": database_url_for_worker(), "DJANGO_SETTINGS_MODULE": "config.settings.test"}
    env.pop("TEST_DATABASE_NAME", None)
    served = subprocess.run([sys.executable, "-c", SERVE_THE_SCREEN, str(annotator.pk), str(assignment.pk),
                             project.slug], cwd=ROOT, env=env, capture_output=True, text=True, check=True)
    answer = json.loads(served.stdout.splitlines()[-1])

    assert answer["status"] == [200, 200]
    assert turn.sentences.first().text in answer["screen"]  # the screen itself, not a sign-in page
    assert "flows through" in answer["screen"]  # with its triplet panel
    assert answer["loaded"] == []
