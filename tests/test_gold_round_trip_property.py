"""Every export re-imports to the same bytes, for any protocol (issue 46, item 6): a property test.

Hypothesis draws a protocol document with a choice, a multiple, a scale and a text step (and more choices, labels
reached by one path or by several), two annotators' walks of a turn's sentences (often the same walk with other
texts), gold by agreement and disputes, then, in some order, a mapped protocol change (a scale turned into a
choice, a label renamed, a label that does not carry over) and the disputes' decisions (a side, a label named, a
walk, with or without a gold text, a lead's override). The project's JSONL export is imported into a fresh project
and exported again: the two files have the same bytes. Bounded (25 examples, derandomized: the same examples on
every run) so the suite stays fast."""

import itertools
import json
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from annotator import models
from annotator.domain.protocol.document import load_protocol
from annotator.domain.vocabulary import Role
from annotator.gold.derivation import gold_derive_for_turn
from annotator.gold.services import GoldError, adjudication_resolve, gold_override
from annotator.projects.protocol_services import protocol_set
from annotator.projects.protocols import protocol_for

from .factories import DialogueFactory, ProjectFactory, TurnFactory, member
from .factories_gold import submit_walks
from tests.commands import run

pytestmark = pytest.mark.django_db

KINDS = ("choice", "multiple", "scale", "text")
LABELS = ("la", "lb", "lc")
TEXTS = ("Not in the source.", "The source says otherwise.", "Because.")
SENTENCES = ["One.", "Two.", "Three."]
_projects = itertools.count()


@st.composite
def protocol_documents(draw) -> dict:
    """A document whose first walk passes a multiple, a scale and a text step (in a drawn order, choices between),
    other branches drawn freely, three levels deep at most past them."""
    steps: list[dict] = []
    numbers = itertools.count()

    def node(depth: int, must: list[str]) -> tuple[str, str]:
        if not must and (depth >= 3 or (depth > 0 and draw(st.booleans()))):
            return "yields", draw(st.sampled_from(LABELS))
        if must:  # the kinds this branch must still pass: a choice before one now and then, not past depth 2
            kind = must[0] if depth >= 2 else draw(st.sampled_from(("choice", must[0])))
        else:
            kind = draw(st.sampled_from(KINDS))
        rest = must[1:] if must and kind == must[0] else must
        step = {"id": f"s{next(numbers)}", "question": "What now?"}
        steps.append(step)
        if kind == "choice":
            answers = []
            for position in range(draw(st.integers(2, 3))):
                where, target = node(depth + 1, rest if position == 0 else [])
                answers.append({"value": f"a{position}", "label": f"Answer {position}", where: target})
            step["answers"] = answers
            return "next", step["id"]
        step["kind"] = kind
        if kind == "multiple":
            step["answers"] = [{"value": f"m{n}", "label": f"Option {n}"} for n in range(3)]
            step["min"] = draw(st.integers(0, 1))
        elif kind == "scale":
            step["min"], step["max"] = 1, draw(st.integers(2, 5))
        else:
            step["max_length"], step["optional"] = 40, draw(st.booleans())
        where, target = node(depth + 1, rest)
        step[where] = target
        return "next", step["id"]

    must = draw(st.permutations(["multiple", "scale", "text"]))
    node(0, list(must))
    used = sorted({target for step in steps for target in
                   [step.get("yields")] + [a.get("yields") for a in step.get("answers", [])] if target})
    document = {"id": "drawn", "version": 1, "name": "Drawn", "modes": ["sequential"], "start": "s0", "steps": steps,
                "labels": [{"id": label, "name": label.upper()} for label in used]}
    return load_protocol(document).document


def draw_walk(draw, protocol) -> dict:
    """A complete walk of ``protocol``, each answer drawn as the annotation screen would take it."""
    path: dict = {}
    while protocol.label_of(path) is None:
        step = protocol.step(protocol.next_step(path))
        if step.kind == "choice":
            value = draw(st.sampled_from(step.values))
        elif step.kind == "multiple":
            value = [v for v in step.values if draw(st.booleans())]
            value = value if len(value) >= step.min else list(step.values[:step.min])
        elif step.kind == "scale":
            value = draw(st.integers(step.min, step.max))
        else:
            value = draw(st.sampled_from(TEXTS + (("",) if step.optional else ())))
        path = protocol.answer(path, step.id, value)
    return protocol.ordered(path)


def other_texts(draw, protocol, path) -> dict:
    """``path`` with its text steps written anew (the same judgement, other words, or the same words)."""
    return {step: (draw(st.sampled_from(TEXTS)) if protocol.step_kind(step) == "text" else value)
            for step, value in path.items()}




def changed_document(draw, document: dict) -> tuple[dict, dict]:
    """A next version of ``document`` and the label mapping a lead gives with it."""
    new = json.loads(json.dumps(document))
    new["version"] = 2
    labels = [label["id"] for label in new["labels"]]
    mapping = {label: label for label in labels}
    change = draw(st.sampled_from(("scale_to_choice", "rename", "does_not_carry")))
    if change == "scale_to_choice":
        for position, step in enumerate(new["steps"]):
            if step.get("kind") == "scale":
                where = "next" if "next" in step else "yields"
                new["steps"][position] = {"id": step["id"], "question": step["question"], "answers": [
                    {"value": "low", "label": "Low", where: step[where]},
                    {"value": "high", "label": "High", where: step[where]}]}
    elif change == "rename":
        old = draw(st.sampled_from(labels))
        text = json.dumps(new).replace(f'"{old}"', f'"{old}_v2"')
        new, mapping[old] = json.loads(text), f"{old}_v2"
    else:
        mapping[draw(st.sampled_from(labels))] = None
    return load_protocol(new).document, mapping


def decide(draw, dispute, judge, lead, sides):
    """One open dispute: left open, a side, a label named, a walk, or a lead's override; with a gold text now and
    then. A decision the rules refuse (a gold text where the side's walk has no text step) is no decision."""
    protocol = protocol_for(dispute.turn.dialogue.project)
    action = draw(st.sampled_from(("open", "side", "label", "walk", "override")))
    texts = {step: "The gold text." for step in protocol.kind_steps()
             if protocol.step_kind(step) == "text" and draw(st.booleans())}
    try:
        if action == "side":
            adjudication_resolve(dispute, judge, reason="their reading", side=draw(st.sampled_from(sides)),
                                 texts=texts or None)
        elif action == "label":
            adjudication_resolve(dispute, judge, reason="named", label=draw(st.sampled_from(protocol.labels)))
        elif action == "walk":
            adjudication_resolve(dispute, judge, reason="walked", path=draw_walk(draw, protocol))
        elif action == "override":
            gold_override(dispute.sentence, lead, draw(st.sampled_from(protocol.labels)), "the lead decides")
    except GoldError:
        pass



@settings(max_examples=25, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture,
                                 HealthCheck.data_too_large])
@given(data=st.data())
def test_any_projects_export_imports_and_exports_again_to_the_same_bytes(data):
    draw = data.draw
    document = draw(protocol_documents(), label="document")
    number = next(_projects)
    project = ProjectFactory(slug=f"drawn-{number}")
    lead = member(project, Role.LEAD)
    protocol_set(project, document, user=lead, chosen=True)
    protocol = load_protocol(document)
    turn = TurnFactory(dialogue=DialogueFactory(project=project, external_id=f"d-{number}"), sentences=SENTENCES)
    first_walks = [draw_walk(draw, protocol) for _ in SENTENCES]
    second_walks = [other_texts(draw, protocol, walk) if draw(st.booleans()) else draw_walk(draw, protocol)
                    for walk in first_walks]
    sides = [submit_walks(turn, member(project), walks, protocol) for walks in (first_walks, second_walks)]
    gold_derive_for_turn(turn)

    change = draw(st.sampled_from(("none", "before", "after")), label="protocol change")
    if change == "before":
        new, mapping = changed_document(draw, document)
        protocol_set(project, new, user=lead, label_mapping=mapping)
    judge = member(project, Role.ADJUDICATOR)
    for dispute in models.Adjudication.objects.filter(turn=turn).order_by("pk"):
        decide(draw, dispute, judge, lead, sides)
    if change == "after":
        new, mapping = changed_document(draw, document)
        protocol_set(project, new, user=lead, label_mapping=mapping)

    with tempfile.TemporaryDirectory() as folder:
        first, second = Path(folder) / "first.jsonl", Path(folder) / "second.jsonl"
        run("export_gold", "--project", project.slug, "--format", "jsonl", "--out", str(first))
        ProjectFactory(slug=f"copy-{number}")
        run("import_jsonl", "--project", f"copy-{number}", str(first))
        run("export_gold", "--project", f"copy-{number}", "--format", "jsonl", "--out", str(second))
        assert second.read_bytes() == first.read_bytes()
