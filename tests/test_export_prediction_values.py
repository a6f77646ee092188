"""The gold export's ``prediction`` carries the voted values of the multiple, scale and text steps (issue 50, item
15), the same values the API's predictions show, so that the export alone reproduces the kind steps' scores; an
imported pre-label keeps them, and the round trip gives the same bytes."""

import json

import pytest

from annotator.domain.protocol.document import load_shipped
from annotator.domain.vocabulary import Role
from annotator.projects.protocol_services import protocol_set
from autolabel.jobs import services
from autolabel.labelling.kind_votes import decide_kinds
from autolabel.models import AutoLabelJob, Prediction
from tests.autolabel_fixtures import baseline_llm, baseline_server, profile  # noqa: F401
from tests.factories import DialogueFactory, ProjectFactory, TurnFactory, member
from tests.factories_api import token_client
from tests.commands import run

HALLUDETECT = load_shipped("halludetect")
KIND_STEPS = {"error_types", "severity", "justification"}  # multiple, scale, text
REFERENCE = ("Section 12 of the Tenancy Act 2015 gives a tenant three months to contest a rent increase. "
             "The court in Barlow v Price applied section 12 to a commercial lease.")
SENTENCES = [
    "Section 12 of the Tenancy Act gives a tenant three months to contest a rent increase.",
    "The Supreme Court overruled Barlow in 1998 and abolished every appeal for landlords in Scotland.",
]



def exported_predictions(path) -> dict:
    """(dialogue id, turn index, sentence index) -> the sentence's ``prediction`` (the header line left out)."""
    lines = [json.loads(line) for line in path.read_text().splitlines()[1:]]
    return {(line["dialogue"]["id"], line["turn"]["index"], s["index"]): s.get("prediction")
            for line in lines for s in line["sentences"]}


@pytest.mark.django_db
def test_the_export_carries_the_voted_kind_values_of_a_finished_job_and_they_survive_a_round_trip(profile, tmp_path):  # noqa: F811
    project = ProjectFactory(slug="hd-job")
    lead = member(project, Role.LEAD)
    protocol_set(project, HALLUDETECT.document, user=lead)
    project.refresh_from_db()
    dialogue = DialogueFactory(project=project, external_id="case-1", reference=REFERENCE)
    for index in range(2):
        TurnFactory(dialogue=dialogue, index=index, sentences=SENTENCES, user_message="Can I contest my rent increase?")
    job = services.job_create(project=project, profile=profile, samples=5, threshold=3, enqueue=False)
    assert services.job_run(job.pk) == AutoLabelJob.Status.DONE
    job.refresh_from_db()

    first, second = tmp_path / "first.jsonl", tmp_path / "second.jsonl"
    run("export_gold", "--project", "hd-job", "--format", "jsonl", "--out", str(first))
    exported = exported_predictions(first)
    api = token_client(lead).get(f"/api/v1/projects/hd-job/autolabel-jobs/{job.pk}/predictions/").json()["results"]
    shown = {row["sentence"]: row["values"] for row in api}
    for prediction in Prediction.objects.filter(job=job).select_related("sentence__turn"):
        written = exported[("case-1", prediction.sentence.turn.index, prediction.sentence.index)]
        if prediction.label == "unsupported":
            voted = {step: vote.value for step, vote in
                     decide_kinds(prediction.sample_votes, "unsupported", HALLUDETECT, job.threshold).items()}
            assert set(voted) == KIND_STEPS
            # The API's values, the vote's: a list, an integer and a text, by step id.
            assert written["values"] == shown[prediction.sentence_id] == voted
            assert list(written) == ["label", "hallucinated", "hallucinated_votes", "stage1_kind", "abstentions",
                                     "label_votes", "values", "job", "model", "samples", "threshold"]
            assert list(written["values"]) == sorted(KIND_STEPS)
            HALLUDETECT.validate({"supported": "no", **written["values"]})  # a path the protocol accepts
        else:  # "supported" passes no step of another kind: nothing to write, as the API's {}
            assert prediction.label == "supported" and "values" not in written and shown[prediction.sentence_id] == {}
    assert sum("values" in p for p in exported.values()) == 2

    ProjectFactory(slug="hd-copy")
    run("import_jsonl", "--project", "hd-copy", str(first))
    run("export_gold", "--project", "hd-copy", "--format", "jsonl", "--out", str(second))
    assert second.read_bytes() == first.read_bytes()
