"""The offline judge answers any document: a held-out RAGTruth-style protocol (claim? → supported? → conflict or
baseless → evident or subtle; six labels, never tuned on) labelled by a real job against the real baseline server
over HTTP; and a generated document four levels deep, walked by the judge to every one of its labels."""

import json
import random
from pathlib import Path

import pytest

from annotator.domain.protocol.document import load_protocol
from annotator.domain.vocabulary import GoldProvenance, Role
from annotator.models import GoldLabel
from annotator.projects.protocol_services import protocol_set
from autolabel.baseline import judge
from autolabel.jobs import services
from autolabel.labelling.parsing import parse_reply
from autolabel.labelling.pipeline import JobConfig, TurnSpec, plan_requests, rows_from_result
from autolabel.labelling.prompting import DEFAULT_STAGE1_TEMPLATE, DEFAULT_STAGE2_TEMPLATE, STAGE_1, STAGE_2
from autolabel.labelling.replies import CallResult, Choice
from autolabel.labelling.stages import stages_of
from autolabel.models import AutoLabelJob, Prediction
from tests.autolabel_fixtures import baseline_llm, baseline_server, profile  # noqa: F401
from tests.factories import DialogueFactory, ProjectFactory, TurnFactory, member

HELD_OUT = json.loads((Path(__file__).parent / "data" / "ragtruth_style.json").read_text())

# Six original topics: a reference, and one sentence of each kind the held-out protocol tells apart.
TOPICS = [
    ("The Kessel bridge crosses the Marrow river at Tolham. It opened in 1931 and carries 4200 vehicles a day. "
     "Its engineer, Agnes Holt, designed the steel arches after studying older railway viaducts.",
     "The Kessel bridge crosses the Marrow river at Tolham and opened in 1931.",
     "The Kessel bridge opened in 1913 and carries 4200 vehicles across the Marrow river.",
     "The bridge may carry about 2400 vehicles across the Marrow river at Tolham.",
     "Several tourists regularly photograph migrating swans beneath shimmering lanterns.",
     "Perhaps local fishermen once celebrated festivals near the bridge."),
    ("The Orrin observatory stands on Mount Calder at 2650 metres. Its main telescope has a mirror of 3 metres "
     "and began observing in 1978. Astronomers there study variable stars and distant galaxies.",
     "The Orrin observatory stands on Mount Calder and its main telescope began observing in 1978.",
     "The Orrin observatory stands on Mount Calder at 2560 metres with a telescope mirror.",
     "The main telescope may have a mirror of about 5 metres on Mount Calder.",
     "Visiting children frequently enjoy chocolate pastries inside the cafeteria.",
     "Perhaps students sometimes camp outside the observatory during winter."),
    ("The Vell wetland covers 840 hectares north of Brinmouth. Around 190 bird species breed there each spring. "
     "Reed cutting stopped in 1996 when the wetland became a protected reserve.",
     "Around 190 bird species breed in the Vell wetland north of Brinmouth each spring.",
     "The Vell wetland covers 480 hectares north of Brinmouth and became a protected reserve.",
     "Reed cutting may have stopped around 1969 in the Vell wetland reserve.",
     "Ancient merchants traded copper jewellery along forgotten caravan routes.",
     "Perhaps herons occasionally nest near the wetland villages."),
    ("The Pardo library in Selwick holds 310000 volumes. It was founded in 1852 by the merchant Clara Pardo. "
     "Its reading room seats 120 readers under a glass dome.",
     "The Pardo library in Selwick was founded in 1852 by the merchant Clara Pardo.",
     "The Pardo library in Selwick holds 130000 volumes under a glass dome.",
     "The reading room may seat about 210 readers under the glass dome of the Pardo library.",
     "Famous poets reportedly performed midnight concerts beside frozen fountains.",
     "Perhaps scholars occasionally borrow volumes for private study."),
    ("The Harran ferry links Oskar island to the mainland port of Dunmere. The crossing takes 35 minutes and the "
     "ferry sails 14 times a day. It carries cars, cyclists and foot passengers.",
     "The Harran ferry links Oskar island to the mainland port of Dunmere.",
     "The Harran ferry crossing to Oskar island takes 53 minutes and sails 14 times a day.",
     "The ferry may sail about 41 times a day between Oskar island and Dunmere.",
     "Wealthy collectors auctioned rare paintings during glamorous evening galas.",
     "Perhaps dolphins sometimes follow the ferry near the island."),
    ("The Tamsin mill in Corbury spun cotton from 1824 until 1959. At its peak it employed 700 workers. "
     "The building now houses a museum of textile machinery.",
     "The Tamsin mill in Corbury spun cotton from 1824 and now houses a museum of textile machinery.",
     "The Tamsin mill in Corbury spun cotton until 1995 and employed 700 workers.",
     "At its peak the mill may have employed about 1700 workers in Corbury.",
     "Brave explorers crossed icy glaciers searching for hidden emerald caves.",
     "Perhaps weavers sometimes sang traditional songs inside the mill."),
]
GREETINGS = ["Hello! I'd be happy to help with your question.", "Sure, glad to help!",
             "I hope this helps, feel free to ask anything further.", "Thanks for asking!"]
# The gold of each sentence kind (the test data's own labels, not the judge's).
GOLD = ["no_claim", "supported", "subtle_conflict", "evident_conflict", "evident_baseless", "subtle_baseless"]


def held_out_project(turns=36):
    """A project following the held-out document, with ``turns`` gold turns of six sentences."""
    project = ProjectFactory()
    protocol_set(project, HELD_OUT, user=member(project, Role.LEAD))
    project.refresh_from_db()
    protocol = load_protocol(HELD_OUT)
    for number in range(turns):
        reference, *claims = TOPICS[number % len(TOPICS)]
        sentences = [GREETINGS[number % len(GREETINGS)], *claims]
        turn = TurnFactory(dialogue=DialogueFactory(project=project, reference=reference), sentences=sentences,
                           user_message="Tell me about it.")
        for sentence, label in zip(turn.sentences.order_by("index"), GOLD):
            GoldLabel.objects.create(sentence=sentence, label=label, path=protocol.path_for_label(label),
                                     provenance=GoldProvenance.IMPORTED)
    return project


@pytest.mark.django_db
def test_a_job_on_a_held_out_protocol_reaches_most_of_its_labels_and_leaves_no_sentence_unlabelled(profile, baseline_llm):
    project = held_out_project()
    job = services.job_create(project=project, profile=profile, samples=3, threshold=2, enqueue=False)
    assert services.job_run(job.pk) == AutoLabelJob.Status.DONE
    job.refresh_from_db()
    assert job.problems == {} and job.faults == 0  # every request was answered, in allowed tags
    predictions = Prediction.objects.filter(job=job)
    assert predictions.count() == 36 * 6
    assert not predictions.filter(label="").exists()  # every sentence has a label
    labels = set(predictions.values_list("label", flat=True))
    assert labels <= set(load_protocol(HELD_OUT).labels)
    assert len(labels) >= 4, labels
    # The greeting is no claim; the baseless and the conflicting sentences take their own branch.
    by_kind = {kind: set(predictions.filter(sentence__index=index).values_list("label", flat=True))
               for index, kind in enumerate(["greeting", "supported", "conflict", "hedged", "baseless", "hedged_baseless"])}
    assert by_kind["greeting"] == {"no_claim"} and by_kind["supported"] == {"supported"}
    assert by_kind["conflict"] <= {"evident_conflict", "subtle_conflict"}
    assert by_kind["baseless"] <= {"evident_baseless", "subtle_baseless"}


def generated_document(seed=7, depth=4):
    """A valid protocol document of ``depth`` levels of questions in neutral words (nothing the judge's cue lists
    know), two or three answers a step, the deepest steps asked in a second request."""
    rng = random.Random(seed)
    words = ["amber", "basalt", "cobalt", "delta", "ember", "fjord", "garnet", "harbor", "indigo", "jasper",
             "kelp", "lumen", "marble", "nectar", "onyx", "pewter", "quartz", "russet"]
    steps, labels, stage_two = [], [], []

    def label(hallucinated):
        name = f"{rng.choice(words)} {len(labels) + 1}"
        labels.append({"id": f"l{len(labels) + 1}", "name": name.title(), "definition": f"Ends {name}.",
                       "hallucinated": hallucinated})
        return labels[-1]["id"]

    def step(level):
        step_id = f"q{len(steps) + 1}"
        entry = {"id": step_id, "question": f"Which {rng.choice(words)}?", "answers": []}
        steps.append(entry)
        if level >= depth - 1:
            stage_two.append(step_id)
        for index in range(2 if level >= 2 else 3):
            answer = {"value": f"a{index + 1}", "label": f"{words[(level * 3 + index) % len(words)].title()}",
                      "key": str(index + 1), "yn": ""}
            if level < depth and (index == 0 or (index == 1 and level < 2)):
                answer["next"] = step(level + 1)
            else:
                answer["yields"] = label(hallucinated=rng.random() < 0.5 if level else index == 2)
            entry["answers"].append(answer)
        return step_id

    step(1)
    hallucinated = [entry["id"] for entry in labels if entry.pop("hallucinated")]
    for number, entry in enumerate(labels):
        entry["key"] = "123456789abcdefghijklmnopqrstuvwxyz"[number]
    return {"id": f"generated_{seed}", "version": 1, "name": f"Generated {seed}", "description": "Generated.",
            "modes": ["sequential"], "start": "q1", "steps": steps, "labels": labels,
            "groups": {"hallucination": hallucinated, "families": [], "stage_two_steps": stage_two,
                       "agreement_steps": [s["id"] for s in steps], "severity": [], "error_type": []}}


REFERENCE_WORDS = ["granite", "orchard", "lantern", "meadow", "cedar", "harvest", "pilgrim", "thistle", "vessel",
                   "chimney", "saddle", "beacon"]
NOVEL_WORDS = ["zephyr", "quiver", "marigold", "tundra", "walrus", "sapphire", "juniper", "falcon", "nebula",
               "pumice", "vortex", "yonder"]


def probe_sentences():
    """Sentences of 4, 10 and 20 content words at every support from 0 to 1: plain, hedged, reasoning, and with a
    number absent from the reference."""
    found = []
    for length in (4, 10, 20):
        for tenths in range(0, 11):
            shared = round(length * tenths / 10)
            words = [REFERENCE_WORDS[i % len(REFERENCE_WORDS)] for i in range(shared)] \
                + [NOVEL_WORDS[i % len(NOVEL_WORDS)] for i in range(length - shared)]
            plain = " ".join(words).capitalize() + "."
            found += [plain, "It often " + plain.lower(), "Therefore " + plain.lower(), plain[:-1] + " in 1888."]
    return list(enumerate(found, start=1))


@pytest.mark.parametrize("depth, seed", [(4, seed) for seed in range(6)] + [(5, seed) for seed in range(6)])
def test_a_generated_document_four_levels_deep_is_walked_to_every_label(depth, seed):
    document = generated_document(seed, depth)
    protocol = load_protocol(document)
    depths = max(len(path) for path in protocol.paths())
    assert depths >= 4 and len(protocol.labels) >= 8 and protocol.stage_two_steps
    reference = " ".join(REFERENCE_WORDS).capitalize() + ". It was built in 1920."
    sentences = probe_sentences()
    config = JobConfig(5, 3, True, DEFAULT_STAGE1_TEMPLATE, DEFAULT_STAGE2_TEMPLATE, [], protocol=protocol)
    spec = TurnSpec(1, 1, reference, "What is it?", [(number, 100 + number, text) for number, text in sentences])
    stages = stages_of(protocol)
    reached = set()
    for stage in (STAGE_1, STAGE_2):
        for indices, numbers, messages in plan_requests(spec, config, stage):
            replies = [Choice(judge.answer(messages[1]["content"], seed=index), False) for index in indices]
            for row in rows_from_result(stage, indices, numbers, CallResult(replies), protocol):
                assert row["problems"] == {}  # the judge answers in the document's own tags
                spec.existing[(stage, row["sample_index"])] = row
    for index in range(config.samples):
        first, second = spec.existing[(STAGE_1, index)]["votes"], spec.existing.get((STAGE_2, index), {}).get("votes", {})
        for number, tag in first.items():
            reading = stages.stage1_reading(tag)
            if reading.entry is None:
                reached.add(reading.label)
            else:  # the second request answered within the sentence's path, never outside it
                assert second[number] in stages.reachable(reading.entry)
                reached.add(second[number])
    assert reached == set(protocol.labels), sorted(set(protocol.labels) - reached)


def test_stage_two_answers_only_labels_the_sentences_path_can_reach():
    protocol = load_protocol(HELD_OUT)
    spec = TurnSpec(1, 1, TOPICS[0][0], "", [(5, 105, TOPICS[0][4]), (3, 103, TOPICS[0][2])])
    spec.existing[(STAGE_1, 0)] = {"votes": {"5": "yes no baseless", "3": "yes no conflict"}}
    config = JobConfig(1, 1, True, DEFAULT_STAGE1_TEMPLATE, DEFAULT_STAGE2_TEMPLATE, [], protocol=protocol)
    (indices, numbers, messages), = plan_requests(spec, config, STAGE_2)
    text = messages[1]["content"]
    assert "sentence 3: step conflict_degree" in text and "sentence 5: step baseless_degree" in text
    for seed in range(5):
        tags = parse_reply(judge.answer(text, seed), STAGE_2, numbers, protocol=protocol).tags
        assert tags[5].label in {"evident_baseless", "subtle_baseless"} and tags[3].label in {"evident_conflict", "subtle_conflict"}
