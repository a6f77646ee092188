"""The project's gold as CSV, for a spreadsheet: one row per sentence (gold or not), the path's steps as columns.

The JSONL export is the complete one (annotations, adjudications, evidence, the protocol, a round trip); this
one is what a lead filters and counts in a spreadsheet. A sentence with no gold has empty gold columns. Every
cell goes through the one CSV guard (``annotator.domain.csv_cells``): a text a spreadsheet could run as a formula
is kept as text, a multiple step's answers are one cell joined by ``|``. The columns are the protocol's steps
in document order, each named ``path.<step id>`` (a step may share a name with a fixed column: HalluDetect's
``severity``) and holding the answers' ids; a choice or multiple step's answers as the screens word them follow in
``path.<step id>.name``; then the pre-label when a job of the project labelled the sentence. Sentences are
numbered from 1, as every screen numbers them (the JSONL keeps the 0-based index).

The claims views' ``severity`` and ``error_type`` columns are written only where they can hold something: the
project has the view on, or some gold carries the value (imported). Options: ``bom`` starts the file with a UTF-8
byte order mark (Excel reads the file as UTF-8 only then); ``annotators`` adds, per annotator who submitted work in
the project, their label beside the gold (``annotator.<username>``, the label's name).
"""

import io

from annotator.corpus.exports.selectors import export_turns
from annotator.domain.csv_cells import csv_writer
from annotator.domain.protocol.parts import CHOICE
from annotator.models import Assignment, GoldLabel
from annotator.projects.protocols import protocol_for

LEADING_COLUMNS = ("dialogue", "generator_model", "language", "turn", "turn_index", "qualification", "sentence",
                   "start", "end", "text", "gold_label", "gold_name", "hallucinated", "family", "provenance",
                   "decided_by")
CLAIMS_COLUMNS = ("severity", "error_type")  # the claims views', only where they can hold something
PREDICTION_COLUMNS = ("prediction_label", "prediction_hallucinated")
TURNS_PER_PIECE = 200
BOM = "\ufeff"
NAMED_KINDS = (CHOICE, "multiple")  # the kinds whose answers have a wording


def _yes_no(value):
    return "" if value is None else ("yes" if value else "no")


def _claims_columns(project) -> tuple[str, ...]:
    """``severity`` / ``error_type`` where a sentence's gold can have one: the view is on, or a gold has it."""
    golds = GoldLabel.objects.filter(sentence__turn__dialogue__project=project)
    kept = []
    if project.enable_severity or golds.exclude(severity=None).exists():
        kept.append("severity")
    if project.enable_error_types or golds.exclude(error_type="").exists():
        kept.append("error_type")
    return tuple(kept)


def _annotator_names(project) -> list[str]:
    return sorted(set(Assignment.objects.filter(project=project, is_qualification=False,
                                                status=Assignment.Status.SUBMITTED)
                      .values_list("annotator__username", flat=True)))


def _answer_names(protocol, step_id, value):
    """A choice or multiple step's answer(s) as the screens word them; a multiple step's joined by "|" like its ids."""
    if isinstance(value, list):
        return "|".join(protocol.answer_name(step_id, one) for one in value)
    return protocol.answer_name(step_id, value) if value is not None else None


def gold_csv_pieces(project, progress=None, *, bom: bool = False, annotators: bool = False):
    """Yield the CSV in pieces of ``TURNS_PER_PIECE`` turns (memory flat in project size, as the JSONL's)."""
    protocol = protocol_for(project)
    steps = protocol.steps
    named = {step for step in steps if protocol.step_kind(step) in NAMED_KINDS}
    claims = _claims_columns(project)
    people = _annotator_names(project) if annotators else []
    step_columns = [column for step in steps
                    for column in ((f"path.{step}", f"path.{step}.name") if step in named else (f"path.{step}",))]
    buffer = io.StringIO()
    if bom:
        buffer.write(BOM)
    writer = csv_writer(buffer)
    writer.writerow([*LEADING_COLUMNS, *claims, "reason", *step_columns, *(f"annotator.{name}" for name in people),
                     *PREDICTION_COLUMNS])
    for count, turn in enumerate(export_turns(project, progress=progress), start=1):
        dialogue, head = turn["dialogue"], turn["turn"]
        for sentence in turn["sentences"]:
            gold = sentence["gold"] or {}
            label = gold.get("label")
            family = protocol.family_of(label) if label in protocol.labels else None
            path = gold.get("path") or {}
            prediction = sentence.get("prediction") or {}
            given = {a.get("annotator"): a.get("label") for a in sentence.get("annotations") or ()} if people else {}
            path_cells = []
            for step in steps:
                path_cells.append(path.get(step))
                if step in named:
                    path_cells.append(_answer_names(protocol, step, path.get(step)))
            writer.writerow([
                dialogue["id"], dialogue["generator_model"], dialogue["language"], head["id"], head["index"],
                _yes_no(head["is_qualification"]), sentence["index"] + 1, sentence["start"], sentence["end"],
                sentence["text"], label, protocol.label_name(label) if label in protocol.labels else None,
                _yes_no(label in protocol.hallucination_labels) if label else "", family.id if family else None,
                gold.get("provenance"), gold.get("decided_by"), *(gold.get(column) for column in claims),
                gold.get("reason"), *path_cells,
                *(protocol.label_name(given[name]) if given.get(name) else None for name in people),
                prediction.get("label"), _yes_no(prediction.get("hallucinated")),
            ])
        if count % TURNS_PER_PIECE == 0:
            yield buffer.getvalue()
            buffer.seek(0)
            buffer.truncate()
    yield buffer.getvalue()
