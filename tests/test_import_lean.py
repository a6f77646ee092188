"""An import does only the work its file needs (issue 49, item 3): no NLTK when the file brings its sentences
split, no pass of Python's cycle collector over the records it reads and writes."""

import gc
import json
import os
import subprocess
import sys
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command

from annotator.models import GoldLabel, Sentence
from bench.synthetic import write_jsonl
from tests.conftest import database_url_for_worker
from tests.factories import ProjectFactory

ROOT = Path(__file__).resolve().parent.parent

IMPORT_AND_LIST_LOADED = """
import json, sys
from django.core.management import execute_from_command_line
execute_from_command_line(["manage.py", "import_jsonl", "--project", "lean", "--create", sys.argv[1]])
print(json.dumps(sorted(name for name in ("nltk", "scipy", "sklearn", "krippendorff") if name in sys.modules)))
"""


def test_an_import_of_split_sentences_loads_no_nltk_scipy_or_sklearn(tmp_path, transactional_db):
    """The corpus brings its sentences split: cutting text (NLTK Punkt, which drags in SciPy) is never needed."""
    corpus = write_jsonl(tmp_path / "split.jsonl", turns=8, labelled=True)
    env = {**os.environ, "DATABASE_URL": database_url_for_worker(), "DJANGO_SETTINGS_MODULE": "config.settings.test"}
    env.pop("TEST_DATABASE_NAME", None)
    done = subprocess.run([sys.executable, "-c", IMPORT_AND_LIST_LOADED, str(corpus)], cwd=ROOT, env=env,
                          capture_output=True, text=True, check=True)

    assert "8 turns, 80 sentences, 80 labels" in done.stdout
    assert json.loads(done.stdout.splitlines()[-1]) == []
    assert Sentence.objects.filter(turn__dialogue__project__slug="lean").count() == 80


@pytest.mark.django_db
def test_an_import_runs_no_cycle_collection_and_leaves_the_collector_on(tmp_path):
    ProjectFactory(slug="lean")
    corpus = write_jsonl(tmp_path / "gold.jsonl", turns=300, labelled=True)
    passes = []

    def count(phase, info):
        if phase == "start":
            passes.append(info["generation"])

    gc.collect()
    gc.callbacks.append(count)
    try:
        call_command("import_jsonl", "--project", "lean", str(corpus), stdout=StringIO())
    finally:
        gc.callbacks.remove(count)

    assert GoldLabel.objects.filter(sentence__turn__dialogue__project__slug="lean").count() == 3000
    # Reading the command's options and the project's protocol takes a few; the 3,000 sentences took 33 more.
    assert len(passes) <= 5, passes
    assert gc.isenabled()
