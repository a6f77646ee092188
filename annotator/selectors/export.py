"""The gold of a project, turn by turn, for the exporters; memory flat in project size.

Turns, and all their sentences with gold, are read as two streams in the same
stable order (dialogue external id, turn index) and merged as they come; on
PostgreSQL the sentences come through a second connection in the export's
snapshot, read in another thread. The sparse tables (annotations, adjudications,
triplets, predictions) are fetched for a chunk of turns at a time, and only when
the project has any. ``values_list`` rows throughout: a fraction of the cost of
model instances.
"""

from __future__ import annotations

import json
import queue
import threading
from collections import defaultdict
from contextlib import contextmanager
from functools import lru_cache
from itertools import islice

from django.db import connection, transaction
from django.db.models import TextField
from django.db.models.functions import Cast
from psycopg import sql as psycopg_sql

from .. import extensions
from ..domain.claims import counts_as_hallucination
from ..importers import IMPORTED_SENTENCE_EXTRAS, IMPORTED_TRIPLET_EXTRAS
from ..domain.protocol import ordered
from ..models import (
    Adjudication,
    Assignment,
    ClaimTriplet,
    Dialogue,
    EvidenceSpan,
    Sentence,
    SentenceAnnotation,
    TripletAnnotation,
    Turn,
)
from ..domain.vocabulary import HALLUCINATED_LABELS

CHUNK = 1000
# Sentence extras that the export puts back in their own field; others go to the sentence's "metadata".
_EXTRAS_WITH_A_PLACE = frozenset({"annotations", "adjudication", "decided_by"})
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
        turn_order = ("dialogue__external_id", "index")
        rows = (
            Turn.objects.filter(dialogue__project=project)
            .order_by(*turn_order)
            .annotate(history_json=_text("history"), metadata_json=_text("metadata"))
            .values_list(
                "id", "index", "external_id", "user_message", "assistant_response", "history_json", "metadata_json",
                "is_qualification", "dialogue_id",
            )
            .iterator(chunk_size=chunk_size)
        )
        # The sentences (with their gold) of all turns in one stream, in the turns' order: merged with the
        # turns as they come, instead of one query per chunk with a thousand turn ids in it.
        sentence_rows = (
            Sentence.objects.filter(turn__dialogue__project=project)
            .order_by(*(f"turn__{key}" for key in turn_order), "index")
            .annotate(gold_path_json=_text("gold__path"))
            .values_list(
                "turn_id", "id", "index", "start", "end", "text", "gold__label", "gold_path_json", "gold__provenance",
                "gold__reason", "gold__severity", "gold__error_type", "gold__decided_by__username",
            )
        )
        sentences = (_rows_from_snapshot(sentence_rows, 10 * chunk_size, snapshot) if snapshot
                     else _rows(sentence_rows, 10 * chunk_size))
        try:
            done = 0
            state = {"dialogue": None, "golds": {}, "project": project, "min_severity": min_severity,
                     "sentences": sentences, "next_sentence": next(sentences, None),
                     "in_use": _side_tables_in_use(project)}
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


@contextmanager
def _snapshot():
    """Every query of the export sees the database as it was when the export started.

    PostgreSQL: one REPEATABLE READ transaction (which also lets the server-side
    cursors live without WITH HOLD, i.e. without materialising the whole result
    first). SQLite: the open turn cursor holds one read snapshot for the whole
    export already (WAL), and a transaction there would take the write lock.

    Yields the id of that snapshot (``pg_export_snapshot``) when the export started the
    transaction, so that a second connection can read in the same snapshot; else None.
    """
    if connection.vendor != "postgresql":
        yield None
        return
    starts_transaction = not connection.in_atomic_block  # inside a caller's transaction, that one's snapshot holds
    snapshot = None
    with transaction.atomic():
        with connection.cursor() as cursor:
            if starts_transaction:
                cursor.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY")
                cursor.execute("SELECT pg_export_snapshot()")
                snapshot = cursor.fetchone()[0]
            # The sentence stream is sorted in the turns' order: in memory rather than in temporary files.
            cursor.execute("SET LOCAL work_mem = '64MB'")
        yield snapshot


def _rows(queryset, chunk_size):
    """The rows of a ``values_list`` queryset of plain columns, as the driver returns them.

    Through a server-side cursor on PostgreSQL, like ``.iterator()``, but without the
    ORM's per-row work, which costs a third of the time for the 240,000 sentences of
    a large project. Only for columns that need no conversion (no dates, no JSON:
    those are read as text).
    """
    sql, params = queryset.query.sql_with_params()
    with connection.chunked_cursor() as cursor:
        cursor.execute(sql, params)
        while batch := cursor.fetchmany(chunk_size):
            yield from batch


def _rows_from_snapshot(queryset, chunk_size, snapshot):
    """``_rows``, read by a second connection in another thread, in the export's snapshot.

    The server then sorts and sends the sentences while this thread turns the previous ones
    into JSON, instead of each waiting for the other (PostgreSQL runs one statement per
    connection at a time): 1.1 s of the 3 s a 240,000-sentence export took. The queue holds
    two batches, so memory stays flat.
    """
    sql, params = queryset.query.sql_with_params()
    side = connection.copy()  # a wrapper of its own: opening it does not touch the export's connection
    batches: queue.Queue = queue.Queue(maxsize=2)
    stop = threading.Event()

    def hand_over(item):
        while not stop.is_set():
            try:
                batches.put(item, timeout=0.1)
                return True
            except queue.Full:
                continue
        return False

    def read():
        try:
            raw = side.get_new_connection(side.get_connection_params())
        except BaseException as exc:  # raised in the exporting thread
            hand_over(exc)
            return
        try:
            raw.autocommit = True
            raw.execute("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
            raw.execute(psycopg_sql.SQL("SET TRANSACTION SNAPSHOT {}").format(psycopg_sql.Literal(snapshot)))
            raw.execute("SET LOCAL work_mem = '64MB'")
            with raw.cursor(name="export_sentences") as cursor:
                cursor.execute(sql, params)
                while batch := cursor.fetchmany(chunk_size):
                    if not hand_over(batch):
                        break
            raw.execute("ROLLBACK")
            hand_over(None)
        except BaseException as exc:
            hand_over(exc)
        finally:
            raw.close()

    reader = threading.Thread(target=read, name="export-sentences", daemon=True)
    reader.start()
    try:
        while (batch := batches.get()) is not None:
            if isinstance(batch, BaseException):
                raise batch
            yield from batch
    finally:
        stop.set()
        reader.join()


def _side_tables_in_use(project) -> dict[str, bool]:
    """Which of the sparse tables hold anything for the project: the others are not queried per chunk."""
    turns = Turn.objects.filter(dialogue__project=project)
    return {
        "annotations": SentenceAnnotation.objects.filter(
            assignment__turn__dialogue__project=project, assignment__status=Assignment.Status.SUBMITTED).exists(),
        "adjudications": Adjudication.objects.filter(turn__in=turns, status=Adjudication.Status.RESOLVED).exists(),
        "triplets": ClaimTriplet.objects.filter(turn__in=turns).exists(),
        "predictions": extensions.has_predictions(project),
    }


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


def _text(field):
    """A JSON column read as its text: decoding is then done once per distinct value (see _json)."""
    return Cast(field, output_field=TextField())


@lru_cache(maxsize=1024)
def _shared_path(text):
    """Decision paths repeat (one per label): decode each once. The dict is shared: do not modify it."""
    return ordered(json.loads(text))


# The export must not depend on the database: PostgreSQL's jsonb sorts object keys,
# SQLite keeps them as written. So paths come in protocol order, the objects the
# application builds in a fixed key order, and free-form metadata with sorted keys.
ANNOTATION_KEYS = ("annotator", "label", "path", "note", "severity", "justification", "error_type", "evidence")
ADJUDICATION_KEYS = ("adjudicator", "label", "path", "reason", "evidence")
EVIDENCE_KEYS = ("start", "end", "text")
TRIPLET_ANNOTATION_KEYS = ("annotator", "label")


def _sorted(value):
    if isinstance(value, dict):
        return {key: _sorted(value[key]) for key in sorted(value)}
    if isinstance(value, list):
        return [_sorted(item) for item in value]
    return value


def _shaped(obj, keys):
    """``obj`` with ``keys`` first in that order, any other key after them, sorted."""
    if not isinstance(obj, dict):
        return obj
    out = {key: obj[key] for key in keys if key in obj}
    for key in sorted(obj):
        if key not in out:
            out[key] = _sorted(obj[key])
    if isinstance(out.get("path"), dict):
        out["path"] = ordered(out["path"])
    if isinstance(out.get("evidence"), list):
        out["evidence"] = [_shaped(span, EVIDENCE_KEYS) for span in out["evidence"]]
    return out


def _json(text):
    if text is None:
        return None
    if text == "{}":
        return {}
    if text == "[]":
        return []
    return json.loads(text)


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
    annotations = _annotations(turn_ids) if in_use["annotations"] else _NOTHING
    adjudications = _adjudications(turn_ids) if in_use["adjudications"] else _NOTHING
    triplets = _triplets(turn_ids) if in_use["triplets"] else _NOTHING
    predictions = (_predictions(state["project"], [row[1] for rows in sentences.values() for row in rows])
                   if in_use["predictions"] else _NOTHING)

    for turn_id, index, external_id, user_message, response, history, metadata, is_qualification, dialogue_pk in chunk:
        metadata = _json(metadata) or {}
        extras = metadata.pop(IMPORTED_SENTENCE_EXTRAS, {})
        metadata = _sorted(metadata)
        out_sentences = []
        for (_, sentence_id, s_index, start, end, text, label, path, provenance, reason, severity, error_type,
             decided_by) in sentences[turn_id]:
            extra = extras.get(str(s_index), _NOTHING) if extras else _NOTHING
            gold = None
            if label:
                # Gold objects repeat (a label, its path, a provenance): one shared dict per distinct value.
                key = (label, path, provenance, reason, severity, error_type, decided_by or extra.get("decided_by"))
                gold = golds.get(key)
                if gold is None:
                    gold = golds[key] = {
                        "label": label, "path": _shared_path(path) if path is not None else None,
                        "provenance": provenance, "reason": reason, "severity": severity, "error_type": error_type,
                        "decided_by": key[-1],
                    }
                    # Same key, same verdict: safe on the shared dict.
                    if state.get("min_severity") is not None and label in HALLUCINATED_LABELS:
                        gold["severe"] = counts_as_hallucination(label, severity, state["min_severity"])
            live = annotations.get(sentence_id, _NONE) if annotations else _NONE
            adjudication = adjudications.get(sentence_id) if adjudications else None
            if extra:
                imported = [_shaped(a, ANNOTATION_KEYS) for a in extra.get("annotations", [])]
                sentence = {
                    "index": s_index, "start": start, "end": end, "text": text, "gold": gold,
                    "annotations": imported + list(live),
                    "adjudication": adjudication or _shaped(extra.get("adjudication"), ADJUDICATION_KEYS),
                }
                kept = {k: v for k, v in extra.items() if k not in _EXTRAS_WITH_A_PLACE}
                if kept:
                    sentence["metadata"] = _sorted(kept)
            else:
                sentence = {"index": s_index, "start": start, "end": end, "text": text, "gold": gold,
                            "annotations": list(live), "adjudication": adjudication}
            prediction = predictions.get(sentence_id)
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


def _predictions(project, sentence_ids):
    """The latest finished LLM pre-label of each sentence (for analysis; not re-imported as a human label).

    The pre-labeler app builds on this one and registers the reading (see annotator/extensions.py)."""
    return {
        sentence_id: {
            "label": p.label, "hallucinated": p.hallucinated, "hallucinated_votes": p.hallucinated_votes,
            "abstentions": p.abstentions, "label_votes": _sorted(p.label_votes), "job": p.job_id,
            "model": p.job.model, "samples": p.job.samples, "threshold": p.job.threshold,
        }
        for sentence_id, p in extensions.latest_predictions(project, sentence_ids).items()
    }


def _evidence(**filters):
    spans = defaultdict(list)
    for owner, start, end, text in (
        EvidenceSpan.objects.filter(**filters)
        .order_by("start", "id")
        .values_list(next(iter(filters)).split("__")[0] + "_id", "start", "end", "text")
    ):
        spans[owner].append({"start": start, "end": end, "text": text})
    return spans


def _annotations(turn_ids):
    """Submitted annotations per sentence id: who said what, by which path, with which evidence."""
    rows = list(
        SentenceAnnotation.objects.filter(
            sentence__turn_id__in=turn_ids, assignment__status=Assignment.Status.SUBMITTED,
            assignment__is_qualification=False,
        )
        .order_by("sentence_id", "assignment__annotator__username", "id")
        .values_list("id", "sentence_id", "assignment__annotator__username", "label", "path", "note", "severity",
                     "justification", "error_type")
    )
    if not rows:
        return {}
    evidence = _evidence(annotation__sentence__turn_id__in=turn_ids)
    out = defaultdict(list)
    for pk, sentence_id, annotator, label, path, note, severity, justification, error_type in rows:
        out[sentence_id].append({
            "annotator": annotator, "label": label, "path": ordered(path or {}), "note": note, "severity": severity,
            "justification": justification, "error_type": error_type, "evidence": evidence.get(pk, []),
        })
    return out


def _adjudications(turn_ids):
    """The latest resolved adjudication per sentence id."""
    rows = list(
        Adjudication.objects.filter(turn_id__in=turn_ids, status=Adjudication.Status.RESOLVED)
        .order_by("sentence_id", "resolved_at", "id")
        .values_list("id", "sentence_id", "adjudicator__username", "label", "path", "reason")
    )
    if not rows:
        return {}
    evidence = _evidence(adjudication__turn_id__in=turn_ids)
    out = {}
    for pk, sentence_id, adjudicator, label, path, reason in rows:
        out[sentence_id] = {"adjudicator": adjudicator, "label": label, "path": ordered(path or {}), "reason": reason,
                            "evidence": evidence.get(pk, [])}
    return out


def _triplets(turn_ids):
    rows = list(
        ClaimTriplet.objects.filter(turn_id__in=turn_ids)
        .order_by("turn_id", "index", "id")
        .values_list("id", "turn_id", "index", "sentence__index", "head", "relation", "tail", "source",
                     "reference_label", "metadata", "gold__label", "gold__provenance", "gold__reason")
    )
    if not rows:
        return {}
    labels = defaultdict(list)
    for triplet_id, annotator, label in (
        TripletAnnotation.objects.filter(triplet__turn_id__in=turn_ids, assignment__status=Assignment.Status.SUBMITTED)
        .order_by("triplet_id", "assignment__annotator__username", "id")
        .values_list("triplet_id", "assignment__annotator__username", "label")
    ):
        labels[triplet_id].append({"annotator": annotator, "label": label})
    out = defaultdict(list)
    for (pk, turn_id, index, sentence_index, head, relation, tail, source, reference_label, metadata,
         gold_label, gold_provenance, gold_reason) in rows:
        metadata = dict(metadata or {})
        imported = [_shaped(a, TRIPLET_ANNOTATION_KEYS) for a in metadata.pop(IMPORTED_TRIPLET_EXTRAS, [])]
        metadata = _sorted(metadata)
        triplet = {
            "index": index, "sentence_index": sentence_index, "head": head, "relation": relation, "tail": tail,
            "source": source, "reference_label": reference_label, "annotations": imported + labels.get(pk, []),
            "metadata": metadata,
        }
        if gold_label:  # the triplet gold of double annotation (claims); absent when there is none
            triplet["gold"] = {"label": gold_label, "provenance": gold_provenance, "reason": gold_reason}
        out[turn_id].append(triplet)
    return out
