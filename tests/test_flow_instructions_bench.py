"""bench/flow_instructions.py's flow, without valgrind: two annotators work turns through the real requests."""

import json

import pytest

from annotator.models import Assignment, GoldLabel, Project
from bench import flow_instructions
from bench.sync_ab import SLUG
from bench.synthetic import create_synthetic_project


@pytest.mark.django_db(transaction=True)
def test_the_counted_flow_labels_submits_and_completes_turns_as_the_page_does(capsys):
    project, _ = create_synthetic_project(SLUG, turns=12, sentences_per_turn=5, reference_words=60, labelled=False,
                                          name="Flow instructions")
    Project.objects.filter(pk=project.pk).update(overlap=2)
    flow_instructions.child(flow_instructions.ROOT, turns=4)

    figures = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    # Measured: four turns of five sentences, each a screen, five saves and a submit, in that order.
    assert figures["labelled"] == 20
    assert figures["kinds"] == (["screen"] + ["sync"] * 5 + ["submit"]) * 4
    # Warm-up and measured turns alike were submitted, and the second annotator's submissions decided gold.
    submitted = Assignment.objects.filter(status=Assignment.Status.SUBMITTED)
    assert submitted.count() == flow_instructions.WARM_UP_TURNS + 4
    assert GoldLabel.objects.filter(sentence__turn__assignments__in=submitted).exists()
