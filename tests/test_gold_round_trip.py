"""Every gold survives a round trip (issue 46, items 4 and 5): a gold's path holds the answers that were decided,
each on one walk that yields its label (annotator/domain/gold_paths.py), and `import_jsonl` takes back exactly that.

Item 4: two annotators who agree on every deciding step but write different justifications make gold without a
text; its export re-imports and exports again to the same bytes. Item 5: after a mapped protocol change that turns
a scale into a choice, a side picked in a dispute keeps every answer the new version takes (not `path: {}`), gold
decided before the change is exported with the answers that carry, and both re-import to the same bytes."""

import json

import pytest
from django.core.management.base import CommandError
from django.test import Client

from annotator import models
from annotator.domain.protocol.document import load_protocol, load_shipped
from annotator.domain.vocabulary import GoldProvenance, Role
from annotator.gold.derivation import gold_derive_for_turn
from annotator.projects.protocol_services import protocol_set

from .factories import DialogueFactory, ProjectFactory, TurnFactory, member
from .factories_gold import submit_walks as submitted_walks
from tests.commands import run, export

pytestmark = pytest.mark.django_db

HALLUDETECT = load_shipped("halludetect")
SUPPORTED = {"supported": "yes"}


def walk(errors=("fabricated",), severity=4, text="The statute says three years."):
    return {"supported": "no", "error_types": list(errors), "severity": severity, "justification": text}




def round_trip(slug, tmp_path) -> tuple[list[dict], bytes, bytes]:
    """Export ``slug``, import the file into a fresh project, export that: (the first file's lines, both files)."""
    first, second = tmp_path / "first.jsonl", tmp_path / "second.jsonl"
    lines = export(slug, first)
    ProjectFactory(slug="fresh")
    run("import_jsonl", "--project", "fresh", str(first))
    run("export_gold", "--project", "fresh", "--format", "jsonl", "--out", str(second))
    return lines, first.read_bytes(), second.read_bytes()


def submit_walks(turn, annotator, paths, protocol=HALLUDETECT):
    return submitted_walks(turn, annotator, paths, protocol)


@pytest.fixture
def project():
    project = ProjectFactory(slug="legal")
    protocol_set(project, HALLUDETECT.document, user=member(project, Role.LEAD, username="lead"), chosen=True)
    project.refresh_from_db()
    return project


def test_annotators_who_agree_with_different_texts_make_gold_that_round_trips_byte_for_byte(project, tmp_path):
    turn = TurnFactory(dialogue=DialogueFactory(project=project, external_id="d-1"),
                       sentences=["One.", "Two.", "Three."])
    first, second = member(project, username="ann-1"), member(project, username="ann-2")
    submit_walks(turn, first, [SUPPORTED, walk(text="No such case."), walk(text="Same words.")])
    submit_walks(turn, second, [SUPPORTED, walk(text="The case does not exist."), walk(text="Same words.")])
    assert len(gold_derive_for_turn(turn).agreed) == 3

    (header, line), exported, again = round_trip("legal", tmp_path)
    s0, s1, s2 = line["sentences"]
    # No gold text where the texts differ: the step is absent (the annotators' texts are in their answers) ...
    assert s1["gold"]["path"] == {"supported": "no", "error_types": ["fabricated"], "severity": 4}
    assert [a["path"]["justification"] for a in s1["annotations"]] == ["No such case.", "The case does not exist."]
    # ... and the one text both wrote where they wrote the same.
    assert s2["gold"]["path"] == walk(text="Same words.")
    assert again == exported
    fresh = models.GoldLabel.objects.get(sentence__turn__dialogue__project__slug="fresh", sentence__index=1)
    assert (fresh.label, fresh.path, fresh.provenance) == ("unsupported", s1["gold"]["path"], GoldProvenance.AGREEMENT)


def write_jsonl(path, *objects):
    path.write_text("".join(json.dumps(obj) + "\n" for obj in objects))
    return str(path)


def one_sentence_line(gold):
    return {"dialogue": {"id": "d-9"}, "turn": {"index": 0, "response": "One."},
            "sentences": [{"index": 0, "start": 0, "end": 4, "text": "One.", "gold": gold}]}


@pytest.mark.parametrize("label, path, problem", [
    ("unsupported", {"supported": "yes", "severity": 4}, "the path yields 'supported', not the label 'unsupported'"),
    ("supported", {"error_types": ["fabricated"], "severity": 4},
     "no walk that yields 'supported' answers step 'error_types' with ['fabricated']"),
    ("unsupported", {"supported": "no", "severity": 9}, "step 'severity' takes"),
    ("unsupported", {"supported": "no", "severity": 4, "nonsense": 1}, "unknown protocol step 'nonsense'"),
])
def test_a_gold_path_off_its_labels_walks_is_still_refused(tmp_path, label, path, problem):
    ProjectFactory(slug="target")
    source = write_jsonl(tmp_path / "in.jsonl", {"protocol": HALLUDETECT.document},
                         one_sentence_line({"label": label, "path": path}))
    with pytest.raises(CommandError, match=r"in\.jsonl: record line 2: field 'sentences\[0\]\.gold\.path'") as refused:
        run("import_jsonl", "--project", "target", source)
    assert problem in str(refused.value)
    assert not models.Dialogue.objects.filter(project__slug="target").exists()


# --- item 5: a mapped change that turns the scale into a choice ----------------------------------------------

def severity_as_a_choice() -> dict:
    """HalluDetect with its severity scale turned into a choice (minor / major), both leading on to the
    justification: "unsupported" is now reached by two walks."""
    document = HALLUDETECT.document
    document["version"] = 2
    for position, step in enumerate(document["steps"]):
        if step["id"] == "severity":
            document["steps"][position] = {
                "id": "severity", "question": step["question"], "definition": step["definition"],
                "guideline": step["guideline"],
                "answers": [{"value": "minor", "label": "Minor", "key": "1", "next": "justification"},
                            {"value": "major", "label": "Major", "key": "2", "next": "justification"}]}
    return load_protocol(document).document


@pytest.fixture
def changed(project):
    """Under version 1: sentence 0 agreed (gold), sentence 1 disputed on the scale; then the lead moves the project
    to version 2 (the scale a choice), every label carried over as itself."""
    turn = TurnFactory(dialogue=DialogueFactory(project=project, external_id="d-1"), sentences=["One.", "Two."])
    first, second = member(project, username="ann-1"), member(project, username="ann-2")
    a1 = submit_walks(turn, first, [walk(["fabricated", "wrong_citation"], 3, "Agreed."),
                                    walk(severity=2, text="Minor slip.")])
    submit_walks(turn, second, [walk(["fabricated", "wrong_citation"], 3, "Agreed."),
                                walk(severity=5, text="It changes the outcome.")])
    gold_derive_for_turn(turn)
    protocol_set(project, severity_as_a_choice(), user=project.memberships.get(role=Role.LEAD).user,
                 label_mapping={"supported": "supported", "unsupported": "unsupported"})
    return {"turn": turn, "a1": a1, "sentences": list(turn.sentences.order_by("index"))}


def test_a_side_picked_after_the_scale_became_a_choice_keeps_every_answer_that_carries(project, changed, tmp_path):
    dispute = models.Adjudication.objects.get(sentence=changed["sentences"][1])
    client = Client()
    client.force_login(member(project, Role.ADJUDICATOR, username="judge"))
    response = client.post(f"/p/{project.slug}/adjudication/{dispute.pk}/resolve/", {
        "reason": "the slip is minor", "decision": f"side-{changed['a1'].pk}",
        "walked_protocol": load_protocol(severity_as_a_choice()).checksum})
    assert response.status_code == 302
    gold = models.GoldLabel.objects.get(sentence=changed["sentences"][1])
    # The point 2 is no answer of the new choice, which nobody answered: absent; the rest of the side's walk stays.
    assert (gold.label, gold.path) == ("unsupported", {"supported": "no", "error_types": ["fabricated"],
                                                       "justification": "Minor slip."})

    (header, line), exported, again = round_trip("legal", tmp_path)
    assert again == exported
    assert line["sentences"][1]["gold"]["path"] == gold.path


def test_gold_agreed_before_the_change_is_exported_with_the_answers_that_carry(project, changed, tmp_path):
    """It used to be written with ``"path": null`` (the label has two walks now), which the import refused."""
    (header, line), exported, again = round_trip("legal", tmp_path)
    assert again == exported
    gold = line["sentences"][0]["gold"]
    assert gold["label"] == "unsupported"
    assert gold["path"] == {"supported": "no", "error_types": ["fabricated", "wrong_citation"], "justification": "Agreed."}
    assert gold["given_under"] == {"version": 1, "label": "unsupported",
                                   "path": walk(["fabricated", "wrong_citation"], 3, "Agreed.")}
