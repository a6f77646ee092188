"""The faithfulness report of a job in a project that changed its protocol: every figure is in the job's version;
gold decided under an older version counts as the mapping carries it over, and gold whose label does not carry
over is left out and counted. A single-version project's statement is unchanged (test_faithfulness_report.py)."""

import pytest

from annotator.domain.vocabulary import Role
from annotator.models import GoldEvent, GoldLabel
from annotator.projects.protocol_services import protocol_set
from autolabel.faithfulness.report import faithfulness_report
from tests.factories import member
from tests.factories_faithfulness import draw, finished_job
from tests.factories_workspace import annotators, project_with_turns
from tests.test_protocol_versions_counted import MAPPING, V2, label_turn
from annotator.domain.protocol.document import COGNIBENCH

pytestmark = pytest.mark.django_db


def test_gold_of_an_older_version_is_carried_to_the_jobs_version_and_the_rest_counted_as_left_out():
    project, _ = project_with_turns(1, overlap=1)
    # Real work under the built-in version freezes it, so the new version needs (and records) a mapping.
    label_turn(project, annotators(project, 1)[0], ["faithful", "faithful", "faithful"], COGNIBENCH.document)
    job, turns = finished_job(project, [
        ("model-a", [({"label": "faithful", "hallucinated": False}, "faithful"),
                     ({"label": "made_up", "hallucinated": True}, "invented"),
                     ({"label": "faithful", "hallucinated": False}, "irrelevant")]),
        ("model-a", [({"label": "faithful", "hallucinated": False}, "faithful")] * 2),
    ])
    draw(job, turns)
    for gold in GoldLabel.objects.filter(sentence__turn__in=turns):  # decided under version 1, as gold services record
        GoldEvent.objects.create(sentence_id=gold.sentence_id, old_label="", new_label=gold.label,
                                 provenance=gold.provenance)
    version = protocol_set(project, V2, user=member(project, Role.LEAD), label_mapping=MAPPING)
    job.protocol_version = version
    job.save(update_fields=["protocol_version"])
    project.refresh_from_db()
    assert GoldLabel.objects.filter(sentence__turn=turns[0]).count() == 3

    report, calibration = faithfulness_report(job)
    overall = report["overall"]
    # Four gold sentences counted (invented → made_up among them), "irrelevant" (mapped to null) left out.
    assert overall["gold_sentences"] == 4
    assert overall["hallucination_rate"]["gold_only"] == 0.25
    assert report["calibration"]["protocol_version"] == 2 and report["calibration"]["gold_not_carried"] == 1
    assert ("Every figure is in protocol version 2 (the job's): gold decided under an older version counts as its "
            "mapping carries it over; 1 gold sentence decided under a later version or with a label that does not "
            "carry over is left out.") in calibration.statement
