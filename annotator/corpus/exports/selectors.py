"""The gold of a project, turn by turn, for the exporters; memory flat in project size.

Turns, and all their sentences with gold, are read as two streams in the same
stable order (dialogue id as people count, ``annotator.domain.natural_order``:
``legal-2`` before ``legal-10``; then turn index) and merged as they come. The
dialogues are put in that order in Python, the same on every database, and each
stream reads a group of them per query, in the group's order; on PostgreSQL the
sentences come through a second connection in the export's snapshot, read in
another thread (stream.py). The sparse tables
(annotations, adjudications, triplets, predictions) are fetched for a chunk of
turns at a time, and only when the project has any (export_tables.py).
``values_list`` rows throughout: a fraction of the cost of model instances.
"""

from __future__ import annotations

import json
from itertools import islice

from django.db.models import F, Func, IntegerField

from annotator.domain.claims import counts_as_hallucination
from annotator.domain.natural_order import natural_key
from annotator.domain.protocol.groups import reading
from annotator.projects.protocols import protocol_for
from annotator.corpus.imports.importers import IMPORTED_SENTENCE_EXTRAS
from annotator.models import Dialogue, Sentence, Turn
from annotator.corpus.draws.services import draws_of_turns
from annotator.corpus.exports.carried import ExportCarry
from annotator.corpus.exports.stream import _rows, _rows_from_snapshot, _snapshot
from annotator.corpus.exports.tables import ADJUDICATION_KEYS, ANNOTATION_KEYS, GIVEN_UNDER_KEYS, _adjudications, _annotations, _json, _predictions, _shaped, prediction_shaped, _shared_path, _side_tables_in_use, _sorted, _text, _triplets

CHUNK = 1000
# Dialogues whose turns (or sentences) one query reads: each is named three times in it (its rank in the ORDER BY,
# the rank's value, the IN list), within SQLite's oldest limit of 999 parameters a statement.
DIALOGUES_PER_QUERY = 300
# Sentence extras that the export puts back in their own field; others go to the sentence's "metadata".
# "gold" (a gold label of an older version that does not carry over) and "gold_given_under" (what an imported
# gold label was given as) are the file's own, put back in the sentence's gold (annotator.corpus.exports.carried).
_EXTRAS_WITH_A_PLACE = frozenset({"annotations", "adjudication", "decided_by", "gold", "gold_given_under",
                                  "prediction"})
GOLD_KEYS = ("label", "path", "provenance", "reason", "severity", "error_type", "decided_by")
_NOTHING: dict = {}
_NONE: tuple = ()


def export_turns(project, *, chunk_size: int = CHUNK, progress=None, min_severity: int | None = None):
    """Yield one dict per turn, in the JSONL export schema (docs/jsonl-format.md).

    The dicts are for serialising: gold objects, paths and a dialogue's object
    are shared between sentences and turns, so a caller must not modify them.

    With ``min_severity`` (HalluDetect's filter, e.g. the project's severity
    threshold), the gold of every hallucinated sentence also says whether it is
    ``severe``: rated at least ``min_severity``.
    """
    with _snapshot() as snapshot:
        groups = _dialogue_groups(project)
        rows = _turn_rows(groups, chunk_size)
        # The sentences (with their gold) of all turns in one stream, in the turns' order: merged with the
        # turns as they come, instead of one query per chunk with a thousand turn ids in it.
        sentence_rows = [
            Sentence.objects.filter(turn__dialogue_id__in=group)
            .order_by(_RankIn("turn__dialogue_id", group), "turn__index", "index")
            .annotate(gold_path_json=_text("gold__path"))
            .values_list(
                "turn_id", "id", "index", "start", "end", "text", "gold__label", "gold_path_json", "gold__provenance",
                "gold__reason", "gold__severity", "gold__error_type", "gold__decided_by__username",
            )
            for group in groups
        ]
        sentences = (_rows_from_snapshot(sentence_rows, 10 * chunk_size, snapshot) if snapshot
                     else _rows(sentence_rows, 10 * chunk_size))
        try:
            done = 0
            state = {"dialogue": None, "golds": {}, "project": project, "min_severity": min_severity,
                     "protocol": reading(protocol_for(project)), "walk": protocol_for(project),
                     "sentences": sentences, "next_sentence": next(sentences, None),
                     "in_use": _side_tables_in_use(project)}
            carrier = ExportCarry(project)
            state["carrier"] = carrier if carrier.active else None
            while chunk := list(islice(rows, chunk_size)):
                yield from _chunk(chunk, state)
                done += len(chunk)
                if progress is not None:
                    progress(done)
            if state["next_sentence"] is not None:
                # The two streams disagree on the order of turns: an export missing sentences must not be written.
                raise RuntimeError(f"export: sentence {state['next_sentence'][1]} was not matched with its turn")
        finally:
            # Close the server-side cursors inside the transaction (a download cut short stops here too).
            sentences.close()
            rows.close()


def _dialogue_groups(project) -> list[list[int]]:
    """The project's dialogues (their pks) in the order of their ids as people count them (``natural_key``), cut
    into groups of ``DIALOGUES_PER_QUERY``: the turns and the sentences are read one group per query, in order."""
    ordered = sorted(Dialogue.objects.filter(project=project).values_list("external_id", "pk"),
                     key=lambda row: natural_key(row[0]))
    pks = [pk for _, pk in ordered]
    return [pks[start:start + DIALOGUES_PER_QUERY] for start in range(0, len(pks), DIALOGUES_PER_QUERY)]


class _RankIn(Func):
    """``CASE <field> WHEN <pk> THEN <rank> ... END``: the position of a row's dialogue in a group, the SQL ``ORDER
    BY`` of a group in the export's order. Written out at once: Django's ``Case(When(...))`` builds a filter per
    dialogue, which cost a fifth of a large export's time."""

    output_field = IntegerField()

    def __init__(self, field, group):
        super().__init__(F(field))
        self.group = tuple(group)

    def as_sql(self, compiler, connection, **extra_context):
        column, params = compiler.compile(self.source_expressions[0])
        whens = " ".join(["WHEN %s THEN %s"] * len(self.group))
        return f"CASE {column} {whens} END", (*params, *(v for rank, pk in enumerate(self.group) for v in (pk, rank)))


def _turn_rows(groups, chunk_size):
    """The turns of every group, the export's order; a generator, so that closing it closes the open cursor."""
    for group in groups:
        yield from (
            Turn.objects.filter(dialogue_id__in=group)
            .order_by(_RankIn("dialogue_id", group), "index")
            .annotate(history_json=_text("history"), metadata_json=_text("metadata"))
            .values_list(
                "id", "index", "external_id", "user_message", "assistant_response", "history_json", "metadata_json",
                "is_qualification", "dialogue_id",
            )
            .iterator(chunk_size=chunk_size)
        )


def _sentences_of(turn_ids, state):
    """The rows of the sentence stream that belong to ``turn_ids`` (in order), by turn id."""
    out = {}
    stream, row = state["sentences"], state["next_sentence"]
    for turn_id in turn_ids:
        mine = []
        while row is not None and row[0] == turn_id:
            mine.append(row)
            row = next(stream, None)
        out[turn_id] = mine
    state["next_sentence"] = row
    return out


def _dialogues(chunk, state):
    """The dialogues of a chunk's turns, read once each (a reference is long; turns share it).

    The last dialogue of the previous chunk is carried over, so a dialogue whose
    turns straddle two chunks stays one object.
    """
    out = dict([state["dialogue"]]) if state["dialogue"] else {}
    wanted = {row[8] for row in chunk} - set(out)
    for pk, external_id, topic, language, model, reference, metadata in (
        Dialogue.objects.filter(pk__in=wanted)
        .annotate(metadata_json=_text("metadata"))
        .values_list("pk", "external_id", "topic", "language", "generator_model", "reference", "metadata_json")
    ):
        out[pk] = {"id": external_id, "topic": topic, "language": language, "generator_model": model,
                   "reference": reference, "metadata": _sorted(_json(metadata) or {})}
    return out


def _chunk(chunk, state):
    turn_ids = [row[0] for row in chunk]
    golds = state["golds"]
    if len(golds) > 10_000:  # free-text reasons make every gold distinct: do not keep them all
        golds.clear()
    dialogues = _dialogues(chunk, state)
    sentences = _sentences_of(turn_ids, state)
    in_use = state["in_use"]
    walk = state["walk"]
    carrier = state.get("carrier")
    annotations = _annotations(turn_ids, walk, carrier) if in_use["annotations"] else _NOTHING
    adjudications = _adjudications(turn_ids, walk, carrier) if in_use["adjudications"] else _NOTHING
    gold_changes = (carrier.gold_changes([row[1] for rows in sentences.values() for row in rows if row[6]])
                    if carrier is not None else _NOTHING)
    triplets = _triplets(turn_ids) if in_use["triplets"] else _NOTHING
    predictions = (_predictions(state["project"], [row[1] for rows in sentences.values() for row in rows])
                   if in_use["predictions"] else _NOTHING)
    draws = draws_of_turns(turn_ids) if in_use["draws"] else _NOTHING

    for turn_id, index, external_id, user_message, response, history, metadata, is_qualification, dialogue_pk in chunk:
        metadata = _json(metadata) or {}
        extras = metadata.pop(IMPORTED_SENTENCE_EXTRAS, {})
        metadata = _sorted(metadata)
        out_sentences = []
        turn_draws = draws.get(turn_id) if draws else None
        for (_, sentence_id, s_index, start, end, text, label, path, provenance, reason, severity, error_type,
             decided_by) in sentences[turn_id]:
            extra = extras.get(str(s_index), _NOTHING) if extras else _NOTHING
            gold = None
            given = None
            if label and carrier is not None:  # decided under an older version: in the header's version's labels
                label, path, given = carrier.gold(label, path, gold_changes.get(sentence_id))
            elif label and extra.get("gold_given_under"):
                given = _shaped(extra["gold_given_under"], GIVEN_UNDER_KEYS, walk)
            if label or given:
                # Gold objects repeat (a label, its path, a provenance): one shared dict per distinct value.
                key = (label, path, provenance, reason, severity, error_type, decided_by or extra.get("decided_by"),
                       tuple(d["id"] for d in turn_draws) if turn_draws else None,
                       None if given is None else json.dumps(given, sort_keys=True))
                gold = golds.get(key)
                if gold is None:
                    gold = golds[key] = {
                        "label": label, "path": _shared_path(path, walk) if path is not None else None,
                        "provenance": provenance, "reason": reason, "severity": severity, "error_type": error_type,
                        "decided_by": key[6],
                    }
                    if given is not None:
                        gold["given_under"] = given
                    if turn_draws:
                        # The gold of a drawn turn names the draws that sent the turn to people (how it was chosen).
                        gold["draws"] = turn_draws
                    # Same key, same verdict: safe on the shared dict.
                    if label and state.get("min_severity") is not None and label in state["protocol"].hallucinated:
                        gold["severe"] = counts_as_hallucination(state["protocol"], label, severity,
                                                                 state["min_severity"])
            live = annotations.get(sentence_id, _NONE) if annotations else _NONE
            adjudication = adjudications.get(sentence_id) if adjudications else None
            if extra:
                imported = [_shaped(a, ANNOTATION_KEYS, walk) for a in extra.get("annotations", [])]
                if gold is None and extra.get("gold"):  # an older version's gold that does not carry over
                    gold = _shaped(extra["gold"], GOLD_KEYS, walk)
                sentence = {
                    "index": s_index, "start": start, "end": end, "text": text, "gold": gold,
                    "annotations": imported + list(live),
                    "adjudication": adjudication or _shaped(extra.get("adjudication"), ADJUDICATION_KEYS, walk),
                }
                kept = {k: v for k, v in extra.items() if k not in _EXTRAS_WITH_A_PLACE}
                if kept:
                    sentence["metadata"] = _sorted(kept)
            else:
                sentence = {"index": s_index, "start": start, "end": end, "text": text, "gold": gold,
                            "annotations": list(live), "adjudication": adjudication}
            prediction = predictions.get(sentence_id)
            if prediction is None and extra and extra.get("prediction"):
                # Imported with the sentence (the exporting project's pre-label): written again as it came, unless
                # a job of this project labelled the sentence since.
                prediction = prediction_shaped(extra["prediction"])
            if prediction is not None:
                sentence["prediction"] = prediction
            out_sentences.append(sentence)
        # Consecutive turns of a dialogue share one dialogue object (the exporters encode it once).
        state["dialogue"] = (dialogue_pk, dialogues[dialogue_pk])
        yield {
            "dialogue": dialogues[dialogue_pk],
            "turn": {"index": index, "id": external_id, "user_message": user_message, "response": response,
                     "history": _sorted(_json(history) or []), "metadata": metadata, "is_qualification": is_qualification},
            "sentences": out_sentences,
            "triplets": triplets.get(turn_id, []),
        }

