"""The faithfulness report of a job, read from the database, through the management command."""

import json
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from annotator.domain.vocabulary import DrawStrategy
from autolabel.faithfulness.estimators import estimate_ratio
from autolabel.faithfulness.report import faithfulness_report
from tests.factories import ProjectFactory
from tests.factories_faithfulness import draw, finished_job

pytestmark = pytest.mark.django_db

MEASURE_KEYS = ["hallucination_rate", "cognitive_share", "factual_hallucination_rate", "cognitive_hallucination_rate"]
FIGURE_KEYS = ["auto", "gold_only", "gold_only_ci95", "corrected", "corrected_ci95"]


@pytest.fixture
def world():
    """Seven turns, (pre-label, gold) per sentence. T1, T2, T4 drawn at random and fully gold: the calibration
    turns; T5 drawn but only partly gold; T6 gold but never drawn at random; T7 an inconclusive vote."""
    project = ProjectFactory(slug="fig8")
    job, turns = finished_job(project, [
        ("model-a", [("invented", "invented"), ("faithful", "faithful"), ("speculative", "reliable"),
                     ("irrelevant", "irrelevant")]),
        ("model-a", [("faithful", "invented"), ("reliable", "reliable")]),
        ("model-b", [("faithful", None), ("misleading", None)]),
        ("model-b", [("invented", "faithful"), ("unequivocal", "misleading")]),
        ("model-b", [("faithful", "faithful"), ("faithful", None)]),
        ("model-a", [("faithful", "speculative"), ("faithful", "faithful"), ("faithful", "faithful")]),
        ("model-a", [("", None)]),
    ])
    t1, t2, t3, t4, t5, t6, t7 = turns
    draw(job, [t1, t2, t4, t5])
    draw(job, [t6], strategy=DrawStrategy.UNCERTAINTY)  # chosen by the judge's doubt: not random
    other_job, _ = finished_job(project, [("model-a", [("faithful", None)])])
    draw(other_job, [t6])  # drawn at random, but for another job
    return project, job


def test_hand_computed_estimates_per_model_and_overall(world):
    project, job = world
    report, calibration = faithfulness_report(job)
    overall = report["overall"]

    assert (overall["sentences"], overall["gold_sentences"], overall["gold_turns"]) == (16, 9, 4)
    # auto over all 16 sentences; gold-only over the 9 gold sentences of T1, T2, T4 and T5 (its one with gold).
    assert overall["hallucination_rate"]["auto"] == 0.25  # invented, speculative, misleading, invented
    assert overall["hallucination_rate"]["gold_only"] == round(3 / 9, 4)  # invented, invented, misleading
    assert overall["cognitive_share"]["auto"] == round(4 / 14, 4)  # the blank vote is neither factual nor cognitive
    assert overall["cognitive_share"]["gold_only"] == round(3 / 8, 4)
    assert overall["factual_hallucination_rate"]["auto"] == 0.2
    assert overall["factual_hallucination_rate"]["gold_only"] == 0.4
    assert overall["cognitive_hallucination_rate"]["auto"] == 0.5
    assert overall["cognitive_hallucination_rate"]["gold_only"] == round(1 / 3, 4)
    # The corrected estimate is the estimator's on these per-turn counts (turns in id order): the judge's
    # counts over every sentence of every turn, the gold's over the gold sentences of the drawn turns.
    expected = estimate_ratio([2, 0, 1, 1, 0, 0, 0], [4, 2, 2, 2, 2, 3, 1], [1, 1, 0, 1, 1, 0, 0], [1, 1, 1, 0],
                              [4, 2, 2, 1])
    assert overall["hallucination_rate"]["corrected"] == round(expected.corrected, 4)
    assert overall["hallucination_rate"]["corrected_ci95"] == [round(x, 4) for x in expected.corrected_ci95]

    model_a, model_b = report["models"]
    assert (model_a["generator_model"], model_a["sentences"], model_a["gold_sentences"]) == ("model-a", 10, 6)
    assert model_a["hallucination_rate"]["auto"] == 0.2 and model_a["hallucination_rate"]["gold_only"] == round(2 / 6, 4)
    # model-b has two calibration turns, T4 and T5 (on its gold sentence).
    assert (model_b["generator_model"], model_b["sentences"], model_b["gold_sentences"]) == ("model-b", 6, 3)
    expected_b = estimate_ratio([1, 1, 0], [2, 2, 2], [0, 1, 1], [1, 0], [2, 1])
    assert model_b["hallucination_rate"]["gold_only"] == round(1 / 3, 4)
    assert model_b["hallucination_rate"]["corrected"] == round(expected_b.corrected, 4)

    assert (calibration.turns, calibration.sentences, calibration.drawn_waiting) == (4, 9, 0)
    assert (calibration.partial_turns, calibration.sentences_without_gold) == (1, 1)
    assert (calibration.other_turns, calibration.other_sentences) == (1, 3)
    assert "3 gold sentences on 1 turn were not drawn at random" in calibration.statement
    assert "1 sentence of 1 drawn turn has no gold" in calibration.statement
    assert report["calibration"] == calibration.as_json() and not calibration.bias_warning


def test_drawn_turns_with_an_unlabelled_sentence_are_not_dropped(world):
    """Issue 22 item 11, the bias: CogniBench leaves some sentences without a label, and those turns hallucinate
    less. Using only fully labelled drawn turns read 0.75 here where the drawn gold says 0.375."""
    project = ProjectFactory(slug="bias")
    complete = [("model-a", [("invented", "invented"), ("invented", "invented"), ("faithful", "faithful"),
                             ("invented", "invented")])] * 6
    one_unlabelled = [("model-a", [("faithful", "faithful"), ("faithful", "faithful"), ("faithful", "faithful"),
                                   ("faithful", None)])] * 4
    job, turns = finished_job(project, complete + one_unlabelled + [("model-a", [("invented", None)])] * 10)
    draw(job, turns[:10])
    report, calibration = faithfulness_report(job)
    rate = report["overall"]["hallucination_rate"]
    drawn_gold = (6 * 3) / (6 * 4 + 4 * 3)  # every gold sentence of every drawn turn
    assert rate["gold_only"] == round(drawn_gold, 4) and rate["gold_only"] != 0.75
    assert report["overall"]["gold_turns"] == 10 and report["overall"]["gold_sentences"] == 36
    assert (calibration.partial_turns, calibration.sentences_without_gold, calibration.drawn_waiting) == (4, 4, 0)
    assert "4 sentences of 4 drawn turns have no gold" in calibration.statement
    assert "those turns are used on their gold sentences" in calibration.statement


def test_drawn_turns_without_gold_are_named_as_left_out_with_a_warning_from_a_tenth_of_the_draw():
    project = ProjectFactory(slug="waiting")
    job, turns = finished_job(project, [("model-a", [("invented", "invented"), ("faithful", "faithful")])] * 8
                              + [("model-a", [("faithful", None), ("faithful", None)])] * 2)
    draw(job, turns)
    report, calibration = faithfulness_report(job)
    assert (calibration.turns, calibration.drawn, calibration.drawn_waiting) == (8, 10, 2)
    assert "2 drawn turns have no gold yet and are left out (20 % of the 10 drawn turns)." in calibration.statement
    assert calibration.bias_warning and "Warning: the estimates may be biased" in calibration.statement
    assert report["calibration"]["left_out_turns"] == 2 and report["calibration"]["left_out_share"] == 0.2
    assert report["calibration"]["bias_warning"] is True


def test_a_vote_without_a_label_counts_by_the_vote_and_its_stage_one_kind():
    project = ProjectFactory()
    job, _ = finished_job(project, [("model-a", [
        ({"label": "", "hallucinated": True, "stage1_kind": "factual"}, None),
        ({"label": "", "hallucinated": True, "stage1_kind": "cognitive"}, None),
        ({"label": "", "hallucinated": False, "stage1_kind": "cognitive"}, None),
        ({"label": "", "hallucinated": False, "stage1_kind": ""}, None),
        ("reliable", None),
    ])])
    overall = faithfulness_report(job)[0]["overall"]
    assert overall["hallucination_rate"]["auto"] == 0.4
    assert overall["cognitive_share"]["auto"] == 0.75
    assert overall["factual_hallucination_rate"]["auto"] == 1.0
    assert overall["cognitive_hallucination_rate"]["auto"] == round(1 / 3, 4)


def test_without_gold_drawn_at_random_only_the_pre_labels_are_reported():
    project = ProjectFactory()
    job, turns = finished_job(project, [("model-a", [("invented", "invented"), ("faithful", "faithful")]),
                                        ("model-a", [("faithful", "faithful")])])
    draw(job, turns, strategy=DrawStrategy.UNCERTAINTY)
    report, calibration = faithfulness_report(job)
    for group in [report["overall"], *report["models"]]:
        assert group["gold_sentences"] == 0
        for measure in MEASURE_KEYS:
            assert [group[measure][key] for key in FIGURE_KEYS[1:]] == [None] * 4
    assert report["overall"]["hallucination_rate"]["auto"] == round(1 / 3, 4)
    assert calibration.statement.startswith("No gold drawn at random for this job yet")
    assert "3 gold sentences on 2 turns were not drawn at random" in calibration.statement


def test_turns_not_finished_yet_are_left_out_and_an_empty_job_reports_nothing():
    project = ProjectFactory()
    job, turns = finished_job(project, [("model-a", [("invented", "invented")]), ("model-b", [("faithful", None)])])
    job.job_turns.filter(turn=turns[1]).update(done=False)
    report, _ = faithfulness_report(job)
    assert report["overall"]["sentences"] == 1 and [g["generator_model"] for g in report["models"]] == ["model-a"]
    job.job_turns.update(done=False)
    report, calibration = faithfulness_report(job)
    assert report["models"] == [] and report["overall"]["sentences"] == 0
    assert report["overall"]["hallucination_rate"] == dict.fromkeys(FIGURE_KEYS)
    assert calibration.turns == calibration.other_turns == 0


def test_the_command_prints_the_documented_json(world):
    project, job = world
    out = StringIO()
    call_command("model_faithfulness", "--project", project.slug, "--job", str(job.pk), "--json", stdout=out)
    data = json.loads(out.getvalue())

    assert list(data) == ["job", "overall", "models", "calibration", "measures"] and data["job"] == job.pk
    # The measures, named and titled from the CogniBench document (the project's protocol).
    assert data["measures"] == [
        {"id": "hallucination_rate", "title": "Hallucination rate (all sentences)"},
        {"id": "cognitive_share", "title": "Share of cognitive statements (sentences in a family)"},
        {"id": "factual_hallucination_rate", "title": "Invented (factual sentences)"},
        {"id": "cognitive_hallucination_rate", "title": "Misleading or speculative (cognitive sentences)"}]
    assert list(data["overall"]) == ["sentences", "gold_sentences", "gold_turns", *MEASURE_KEYS]
    assert [list(group) for group in data["models"]] == [["sentences", "gold_sentences", "gold_turns", *MEASURE_KEYS,
                                                          "generator_model"]] * 2
    assert list(data["calibration"]) == ["drawn_turns", "used_turns", "gold_sentences", "partial_turns",
                                         "sentences_without_gold", "left_out_turns", "left_out_share",
                                         "bias_warning", "other_turns", "other_gold_sentences", "statement"]
    for group in [data["overall"], *data["models"]]:
        assert isinstance(group["sentences"], int) and isinstance(group["gold_sentences"], int)
        for measure in MEASURE_KEYS:
            figures = group[measure]
            assert list(figures) == FIGURE_KEYS
            assert isinstance(figures["auto"], float)
            for value, interval in ((figures["gold_only"], figures["gold_only_ci95"]),
                                    (figures["corrected"], figures["corrected_ci95"])):
                assert (value is None) == (interval is None)
                if value is not None:
                    assert isinstance(value, float) and len(interval) == 2 and interval[0] <= value <= interval[1]
    assert data == json.loads(json.dumps(faithfulness_report(job)[0]))


def test_the_command_prints_a_table_and_refuses_a_wrong_project_or_job(world):
    project, job = world
    out = StringIO()
    call_command("model_faithfulness", "--project", project.slug, "--job", str(job.pk), stdout=out)
    text = out.getvalue()
    assert "9 gold sentences on 4 turns drawn at random" in text
    assert "model-b" in text and "hallucination_rate" in text and "0.333 [" in text
    other = ProjectFactory(slug="elsewhere")
    for arguments in (["--project", "nowhere", "--job", str(job.pk)], ["--project", other.slug, "--job", str(job.pk)],
                      ["--project", project.slug, "--job", "999999"]):
        with pytest.raises(CommandError, match="no auto-label job"):
            call_command("model_faithfulness", *arguments)
    with pytest.raises(CommandError):
        call_command("model_faithfulness", "--project", project.slug, "--job", "abc")
