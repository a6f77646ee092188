"""One vocabulary: under a protocol that is not CogniBench's, no page speaks CogniBench.

A project follows the held-out RAGTruth-style document (tests/data/ragtruth_style.json) and holds a bit of
everything: submitted and unfinished work, gold by agreement and a dispute, imported gold, a finished
pre-labelling job, a question and feedback. Every route of the URL conf (tests/url_walk.py) with this project's
slug and every id of its objects is opened by its lead, an annotator and an adjudicator, and the API schema is
read; none may show one of CogniBench's label, step or family names or step questions, taken from CogniBench's
own document. Left out: the step id "kind" and the feature name "faithfulness" (words of the studio in their
own right), and the schema's examples, which illustrate the built-in protocol and say so.
"""

import json
import re
from pathlib import Path

import pytest
from django.test import Client

from annotator import models
from annotator.domain.protocol.document import load_protocol
from annotator.domain.vocabulary import GoldProvenance, Role
from annotator.gold.derivation import gold_derive_for_turn
from annotator.projects.protocol_services import protocol_set
from autolabel.models import AutoLabelJob, JobTurn, LLMProfile, Prediction, PromptVersion
from tests.factories import AssignmentFactory, DialogueFactory, ProjectFactory, TurnFactory, member
from tests.test_security_isolation import body_of
from tests.url_walk import ids_by_parameter, ids_from_one, integer_like, urls

pytestmark = [pytest.mark.django_db, pytest.mark.slow]

ROOT = Path(__file__).resolve().parent.parent
COGNIBENCH = json.loads((ROOT / "annotator" / "protocols" / "cognibench.json").read_text())
HELD_OUT = json.loads((ROOT / "tests" / "data" / "ragtruth_style.json").read_text())


def cognibench_names() -> set[str]:
    """CogniBench's label ids and names, step ids and questions and their answers (but yes and no), family ids
    and names, from its document."""
    names = set()
    for label in COGNIBENCH["labels"]:
        names |= {label["id"], label["name"]}
    for step in COGNIBENCH["steps"]:
        names |= {step["id"], step["question"]}
        names |= {word for answer in step["answers"] for word in (answer["value"], answer["label"])
                  if word.lower() not in ("yes", "no")}
    for family in COGNIBENCH["groups"]["families"]:
        names |= {family["id"], family["name"]}
    return names - {"kind", "faithfulness"}


NAMES = cognibench_names()
SPOKEN = re.compile(r"(?<![\w-])(%s)(?![\w-])" % "|".join(sorted(map(re.escape, NAMES), key=len, reverse=True)),
                    re.IGNORECASE)
STR_VALUES = {
    "fmt": ["jsonl", "cognibench"],
    "table": ["agreement", "batches", "pairs", "weekly", "protocols"],
    "action": ["answer", "pick", "undo", "note", "evidence_add", "evidence_remove", "submit", "time"],
}


def spoken(text: str) -> list[str]:
    """CogniBench's names in a page's visible words: markup, scripts' code and URLs left aside (a page's
    protocol description, as data, holds the project's own names only)."""
    text = re.sub(r"<script\b[^>]*>.*?</script>|<style\b[^>]*>.*?</style>", " ", text, flags=re.S | re.I)
    text = re.sub(r"<[^>]+>", " ", text)
    return sorted({match.group(1) for match in SPOKEN.finditer(text)})


def spoken_in_json(body: str) -> list[str]:
    """An API answer's words: its strings that are text (with a space), not its keys nor its identifiers (an id
    such as a view's denominator key stays the API's contract)."""
    def texts(value):
        if isinstance(value, dict):
            return [text for inner in value.values() for text in texts(inner)]
        if isinstance(value, list):
            return [text for inner in value for text in texts(inner)]
        return [value] if isinstance(value, str) and " " in value else []

    return sorted({name for text in texts(json.loads(body)) for name in spoken(text)})


def held_out_world():
    """The project under the held-out document, with work, gold, a dispute, a job, a question and feedback."""
    ids_from_one()
    project = ProjectFactory(slug="held-out", name="Held out", require_evidence=True, show_prelabels=True,
                             enable_triplets=True, enable_severity=True)
    lead = member(project, Role.LEAD, username="lead")
    protocol_set(project, HELD_OUT, user=lead)
    project.refresh_from_db()
    protocol = load_protocol(HELD_OUT)
    annotators = [member(project, Role.ANNOTATOR, username=f"annotator-{n}") for n in (1, 2)]
    adjudicator = member(project, Role.ADJUDICATOR, username="adjudicator")
    texts = ["Hello, glad to help!", "The bridge opened in 1931.", "It was painted gold in 1990."]
    turns = [TurnFactory(dialogue=DialogueFactory(project=project, reference="The bridge opened in 1931."),
                         sentences=texts) for _ in range(3)]

    def work(turn, annotator, labels, status=models.Assignment.Status.SUBMITTED):
        assignment = AssignmentFactory(turn=turn, annotator=annotator, status=status)
        for sentence, label in zip(turn.sentences.order_by("index"), labels):
            models.SentenceAnnotation.objects.create(assignment=assignment, sentence=sentence, label=label,
                                                     path=protocol.path_for_label(label))
        return assignment

    work(turns[0], annotators[0], ["no_claim", "supported", "evident_baseless"])
    work(turns[0], annotators[1], ["no_claim", "supported", "subtle_conflict"])
    gold_derive_for_turn(turns[0])  # gold by agreement, and a dispute on the third sentence
    work(turns[1], annotators[0], ["no_claim", "supported"], status=models.Assignment.Status.IN_PROGRESS)
    for sentence, label in zip(turns[2].sentences.order_by("index"), ["no_claim", "supported", "subtle_baseless"]):
        models.GoldLabel.objects.create(sentence=sentence, label=label, path=protocol.path_for_label(label),
                                        provenance=GoldProvenance.IMPORTED)
    first = turns[0].sentences.order_by("index").first()
    question = models.Question.objects.create(project=project, turn=turns[0], sentence=first, asked_by=annotators[0])
    models.QuestionMessage.objects.create(question=question, author=annotators[0], body="Is a greeting a claim?")
    models.Feedback.objects.create(project=project, annotation=first.annotations.first(), lead=lead,
                                   expected_label="no_claim", comment="Right.")
    profile = LLMProfile.objects.create(name="judge", base_url="http://127.0.0.1:9/v1")
    prompt = PromptVersion.objects.create(project=project, version=1)
    job = AutoLabelJob.objects.create(project=project, profile=profile, prompt_version=prompt, model="judge",
                                      status=AutoLabelJob.Status.DONE, total_turns=3, done_turns=3, samples=3,
                                      threshold=2, protocol_version=project.protocol_version)
    for turn in turns:
        JobTurn.objects.create(job=job, turn=turn, done=True)
        for sentence, label in zip(turn.sentences.order_by("index"), ["no_claim", "supported", "evident_conflict"]):
            Prediction.objects.create(job=job, sentence=sentence, label=label,
                                      hallucinated=label in protocol.hallucination_labels,
                                      stage1_kind=(protocol.family_of(label).id if protocol.family_of(label) else ""))
    return project, {"lead": lead, "annotator": annotators[0], "adjudicator": adjudicator}


def walk(user, project):
    """{url: CogniBench names shown} of a GET of every route with the project's slug and its objects' ids."""
    tables = [models.Project, models.Dialogue, models.Turn, models.Sentence, models.Assignment,
              models.SentenceAnnotation, models.GoldLabel, models.Adjudication, models.Question, models.Feedback,
              AutoLabelJob]
    pooled = sorted(set().union(*(m.objects.values_list("pk", flat=True) for m in tables)))
    named = ids_by_parameter(pooled)
    named["job_id"] = list(AutoLabelJob.objects.values_list("pk", flat=True))

    def values_for(name, converter):
        if integer_like(converter):
            return named.get(name, pooled)
        if name == "slug":
            return [project.slug]
        if name in STR_VALUES:
            return STR_VALUES[name]
        return None if converter.startswith("regex:") else ["x"]

    client = Client()
    client.force_login(user)
    found, opened = {}, 0
    for route, url in urls(values_for):
        # The protocol format's description and the languages page (docs/ served in the app) explain with
        # CogniBench's document as its example; it belongs to the site, not to a project.
        if route.is_admin or route.name in ("logout", "login", "protocol_format", "languages_help") \
                or route.template.startswith(("/api/schema", "/api/docs", "/api/redoc")):
            continue
        response = client.get(url)
        if response.status_code != 200:
            continue
        opened += 1
        body = body_of(response)
        names = spoken_in_json(body) if response.get("Content-Type", "").startswith("application/json") else spoken(body)
        if names:
            found[url] = names
    return found, opened


@pytest.mark.parametrize("role", ["lead", "annotator", "adjudicator"])
def test_no_page_of_a_project_under_another_protocol_speaks_cognibench(role):
    project, people = held_out_world()
    found, opened = walk(people[role], project)
    assert opened > 10  # the walk did open the project's pages
    assert not found, "\n".join(f"{url}: {', '.join(names)}" for url, names in sorted(found.items()))


def schema_prose(schema):
    """Every string of the schema but its examples."""
    if isinstance(schema, dict):
        return [text for key, value in schema.items() if key not in ("example", "examples")
                for text in schema_prose(value)]
    if isinstance(schema, list):
        return [text for value in schema for text in schema_prose(value)]
    return [schema] if isinstance(schema, str) else []


def test_the_api_schema_speaks_no_protocol_s_names_outside_its_examples(client):
    project, people = held_out_world()
    client.force_login(people["lead"])
    response = client.get("/api/schema/?format=json")
    assert response.status_code == 200
    prose = schema_prose(json.loads(body_of(response)))
    assert any("label" in text for text in prose)  # the schema's descriptions were read
    found = {text[:160]: names for text in prose if (names := spoken(text))}
    assert not found, "\n".join(f"{names}: {text}" for text, names in found.items())


def test_the_check_finds_cognibench_s_names():
    """The check can fail: CogniBench's own words are found, in a page's text, not in its markup."""
    assert spoken("<p>rates are over <b>Relevant</b> sentences; most are faithful</p>") == ["Relevant", "faithful"]
    assert spoken("<td>Is the sentence relevant?</td>") == ["Is the sentence relevant?"]
    assert spoken('<div data-x="speculative">Supported</div><script>const a = "invented";</script>') == []
    assert {"faithful", "Cognitive", "relevance", "Is it rational?"} <= NAMES
