"""The evaluation and the faithfulness report follow the project's protocol (issue 24, item 4).

CogniBench: the figures on a fixed dataset equal those the CogniBench-only code gave (pinned before the
change, ``tests/cognibench_evaluation_dataset.py``). Face4RAG and CogniBench clinical: a few sentences, gold
and pre-labels made through the services and the prediction write path, and every figure by hand.
"""

import json

import pytest
from django.urls import reverse

from annotator.domain.protocol_document import default_protocol, load_shipped
from annotator.domain.vocabulary import DrawStrategy, GoldProvenance, Role
from annotator.models import GoldLabel
from annotator.projects.protocols import protocol_for
from autolabel.evaluation import selectors
from autolabel.faithfulness.report import faithfulness_report
from autolabel.models import AutoLabelJob, LLMProfile, Prediction, PromptVersion
from tests.cognibench_evaluation_dataset import (
    PINNED, evaluation_figures, faithfulness_figures, faithfulness_job,
)
from tests.factories import DialogueFactory, ProjectFactory, TurnFactory, member
from tests.factories_faithfulness import draw

# Keys the reports gained with the protocol: the views' names, the macro, the confusion matrices by family
# (CogniBench's cognitive one stays under "cognitive", and the factual one is also under "factual").
NEW_EVALUATION_KEYS = {"views", "macro", "confusion", "factual"}


def _same(before, after, path=""):
    """Every figure of ``before`` is in ``after`` with the same value (``after`` may have more keys)."""
    if isinstance(before, dict):
        differences = []
        for key, value in before.items():
            if key not in after:
                differences.append(f"{path}/{key}: missing")
            else:
                differences += _same(value, after[key], f"{path}/{key}")
        return differences
    return [] if before == after else [f"{path}: {before!r} became {after!r}"]


def test_cognibench_evaluation_calibration_and_comparison_are_unchanged():
    pinned = json.loads(PINNED.read_text())
    now = evaluation_figures(default_protocol())
    for part in ("evaluation", "calibration", "comparison"):
        assert _same(pinned[part], now[part], part) == []
    assert set(now["evaluation"]) - set(pinned["evaluation"]) == NEW_EVALUATION_KEYS
    assert now["evaluation"]["confusion"]["cognitive"] == pinned["evaluation"]["cognitive"] | {
        "family": "cognitive", "name": "Cognitive"}
    # Not a dataset that hides the cases: labels lost at stage 2, every threshold, both jobs differ.
    assert pinned["evaluation"]["cognitive"]["matrix"]["speculative"]["no label"] > 0
    assert pinned["comparison"]["views"]["cognibench_overall"]["difference"]["f1"] != 0


@pytest.mark.django_db
def test_cognibench_faithfulness_figures_are_unchanged():
    pinned = json.loads(PINNED.read_text())["faithfulness"]
    now = faithfulness_figures(faithfulness_job(ProjectFactory(slug="pinned")))
    pinned["job"] = now["job"]  # a database id
    assert _same(pinned, now) == []
    assert set(now) - set(pinned) == {"measures"}
