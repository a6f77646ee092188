"""The project's gold as CSV, for a spreadsheet: one row per sentence (gold or not), the path's steps as columns.

The JSONL export is the complete one (annotations, adjudications, evidence, the protocol, a round trip); this
one is what a lead filters and counts in a spreadsheet. A sentence with no gold has empty gold columns. Every
cell goes through the one CSV guard (``annotator.domain.csv_cells``): a text a spreadsheet could run as a formula
is kept as text, a multiple step's answers are one cell joined by ``|``. The columns are the protocol's steps
in document order, each named ``path.<step id>`` (a step may share a name with a fixed column: HalluDetect's
``severity``), then the pre-label when a job of the project labelled the sentence.
"""

import io

from annotator.corpus.exports.selectors import export_turns
from annotator.domain.csv_cells import csv_writer
from annotator.projects.protocols import protocol_for

FIXED_COLUMNS = ("dialogue", "generator_model", "language", "turn", "turn_index", "qualification", "sentence",
                 "start", "end", "text", "gold_label", "gold_name", "hallucinated", "family", "provenance",
                 "decided_by", "severity", "error_type", "reason")
PREDICTION_COLUMNS = ("prediction_label", "prediction_hallucinated")
TURNS_PER_PIECE = 200


def _yes_no(value):
    return "" if value is None else ("yes" if value else "no")


def gold_csv_pieces(project, progress=None):
    """Yield the CSV in pieces of ``TURNS_PER_PIECE`` turns (memory flat in project size, as the JSONL's)."""
    protocol = protocol_for(project)
    steps = protocol.steps
    buffer = io.StringIO()
    writer = csv_writer(buffer)
    writer.writerow([*FIXED_COLUMNS, *(f"path.{step}" for step in steps), *PREDICTION_COLUMNS])
    for count, turn in enumerate(export_turns(project, progress=progress), start=1):
        dialogue, head = turn["dialogue"], turn["turn"]
        for sentence in turn["sentences"]:
            gold = sentence["gold"] or {}
            label = gold.get("label")
            family = protocol.family_of(label) if label in protocol.labels else None
            path = gold.get("path") or {}
            prediction = sentence.get("prediction") or {}
            writer.writerow([
                dialogue["id"], dialogue["generator_model"], dialogue["language"], head["id"], head["index"],
                _yes_no(head["is_qualification"]), sentence["index"], sentence["start"], sentence["end"],
                sentence["text"], label, protocol.label_name(label) if label in protocol.labels else None,
                _yes_no(label in protocol.hallucination_labels) if label else "", family.id if family else None,
                gold.get("provenance"), gold.get("decided_by"), gold.get("severity"), gold.get("error_type"),
                gold.get("reason"), *(path.get(step) for step in steps),
                prediction.get("label"), _yes_no(prediction.get("hallucinated")),
            ])
        if count % TURNS_PER_PIECE == 0:
            yield buffer.getvalue()
            buffer.seek(0)
            buffer.truncate()
    yield buffer.getvalue()
