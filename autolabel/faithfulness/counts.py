"""The per-turn counts of the faithfulness report: one aggregate query over the sentences of a job's turns.

For every finished turn of the job: its generator model, its sentences, its gold sentences, and five
counts on each side (pre-labels, gold): hallucinated, factual, invented, cognitive, cognitive and
hallucinated. A sentence counts by its label, from the one vocabulary; a pre-label whose vote gave no
label counts by the vote (hallucinated or not) and its stage-1 kind.

Why the counts are packed: ten ``SUM(CASE ...)`` over the 240,000 sentences of a CogniBench-L job took
about twice as long on SQLite as the joins themselves (bench/faithfulness.py). Each sentence's four kind
flags (factual, invented, cognitive, cognitive-hallucinated) are therefore one integer, ``FIELD_BITS``
bits per flag, chosen by a single ``CASE label``; the per-turn ``SUM`` of those integers is unpacked here
with numpy. A field holds up to 32,767 sentences per turn (an LLM response has tens).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from django.db import connection

from annotator.domain.vocabulary import (
    COGNITIVE_HALLUCINATED_LABELS, COGNITIVE_LABELS, FACTUAL_LABELS, HALLUCINATED_LABELS, Label,
)
from annotator.models import Dialogue, GoldLabel, Sentence, Turn

from autolabel.models import JobTurn, Prediction

COUNTS = ("hallucinated", "factual", "invented", "cognitive", "cognitive_hallucinated")
PACKED = COUNTS[1:]  # hallucinated is counted on its own: for a pre-label it is the vote, not the label
FIELD_BITS = 15
FIELD_MASK = (1 << FIELD_BITS) - 1
KIND_LABELS = {"factual": FACTUAL_LABELS, "invented": {Label.INVENTED}, "cognitive": COGNITIVE_LABELS,
               "cognitive_hallucinated": COGNITIVE_HALLUCINATED_LABELS}


def _bit(count: str) -> int:
    return 1 << (FIELD_BITS * PACKED.index(count))


def packed_flags(label: str) -> int:
    """The packed kind flags of one label (0 for irrelevant)."""
    return sum(_bit(count) for count, labels in KIND_LABELS.items() if label in labels)


def _label_case(column: str, unlabelled: str = "0") -> tuple[str, list]:
    """``CASE column WHEN label THEN flags ... ELSE unlabelled END`` (labels as parameters, flags as numbers)."""
    whens, params = [], []
    for label in Label:
        whens.append(f"WHEN %s THEN {packed_flags(label)}")
        params.append(label.value)
    return f"CASE {column} {' '.join(whens)} ELSE {unlabelled} END", params


def _unlabelled_prediction(p: str) -> tuple[str, list]:
    """The flags of a pre-label without a label: its stage-1 kind, and that kind's hallucination if the vote
    says hallucinated."""
    factual, invented = _bit("factual"), _bit("invented")
    cognitive, cognitive_hallucinated = _bit("cognitive"), _bit("cognitive_hallucinated")
    return (
        f"(CASE WHEN {p}.stage1_kind = %s THEN {factual} + (CASE WHEN {p}.hallucinated THEN {invented} ELSE 0 END) "
        f"WHEN {p}.stage1_kind = %s THEN {cognitive} + (CASE WHEN {p}.hallucinated THEN {cognitive_hallucinated} "
        f"ELSE 0 END) ELSE 0 END)",
        ["factual", "cognitive"],
    )


def turn_counts_sql() -> tuple[str, list]:
    """The statement and its parameters before the two job ids. Table names are the models' own."""
    q = connection.ops.quote_name
    table = {m: q(m._meta.db_table) for m in (JobTurn, Turn, Dialogue, Sentence, Prediction, GoldLabel)}
    unlabelled, unlabelled_params = _unlabelled_prediction("p")
    # A sentence without a prediction (a turn cut short) counts as no label, not hallucinated.
    predicted, predicted_params = _label_case("p.label", f"(CASE WHEN p.label = '' THEN {unlabelled} ELSE 0 END)")
    gold, gold_params = _label_case("g.label")
    hallucinated = ", ".join(["%s"] * len(HALLUCINATED_LABELS))
    sql = (
        f"SELECT jt.turn_id, MAX(d.generator_model), COUNT(s.id), COUNT(g.id), "
        f"SUM(CASE WHEN p.hallucinated THEN 1 ELSE 0 END), SUM({predicted}), "
        f"SUM(CASE WHEN g.label IN ({hallucinated}) THEN 1 ELSE 0 END), SUM({gold}) "
        f"FROM {table[JobTurn]} jt JOIN {table[Turn]} t ON t.id = jt.turn_id "
        f"JOIN {table[Dialogue]} d ON d.id = t.dialogue_id "
        f"JOIN {table[Sentence]} s ON s.turn_id = jt.turn_id "
        f"LEFT JOIN {table[Prediction]} p ON p.sentence_id = s.id AND p.job_id = %s "
        f"LEFT JOIN {table[GoldLabel]} g ON g.sentence_id = s.id "
        f"WHERE jt.job_id = %s AND jt.done "
        # One model per turn (MAX picks it); grouping by the turn alone follows the job's (job, turn) index.
        f"GROUP BY jt.turn_id"
    )
    params = [*predicted_params, *unlabelled_params, *sorted(str(label) for label in HALLUCINATED_LABELS), *gold_params]
    return sql, params


@dataclass
class TurnTable:
    """The per-turn counts as columns (numpy arrays), one row per finished turn of the job."""

    turn_ids: np.ndarray
    model_codes: np.ndarray  # per turn, a key of ``model_names``
    model_names: dict[int, str]
    sentences: np.ndarray
    gold_sentences: np.ndarray
    predicted: dict[str, np.ndarray]  # count name -> per-turn counts of the pre-labels
    gold: dict[str, np.ndarray]  # the same counts from gold, over the turn's gold sentences


def _unpacked(hallucinated: np.ndarray, packed: np.ndarray, sentences: np.ndarray) -> dict[str, np.ndarray]:
    counts = {"hallucinated": hallucinated, "sentences": sentences}
    for k, count in enumerate(PACKED):
        counts[count] = (packed >> (FIELD_BITS * k)) & FIELD_MASK
    counts["relevant"] = counts["factual"] + counts["cognitive"]
    return counts


def read_turn_table(job, chunk: int = 5000) -> TurnTable:
    """The per-turn counts, fetched in chunks straight into integer arrays (a 24,000-turn job holds no
    list of 24,000 row tuples); models are kept as small integer codes."""
    sql, params = turn_counts_sql()
    chunks, codes, model_names = [], [], {}
    with connection.cursor() as cursor:
        cursor.execute(sql, [*params, job.pk, job.pk])
        while rows := cursor.fetchmany(chunk):
            chunks.append(np.array([(r[0], r[2], r[3], r[4], r[5], r[6], r[7]) for r in rows], dtype=np.int64))
            codes.extend(model_names.setdefault(row[1], len(model_names)) for row in rows)
    columns = np.concatenate(chunks) if chunks else np.zeros((0, 7), dtype=np.int64)
    if len(columns) and columns[:, 1].max() > FIELD_MASK:
        raise ValueError(f"a turn of job {job.pk} has more than {FIELD_MASK} sentences")
    sentences = columns[:, 1]
    return TurnTable(
        turn_ids=columns[:, 0], model_codes=np.array(codes, dtype=np.int64),
        model_names={code: name for name, code in model_names.items()},
        sentences=sentences, gold_sentences=columns[:, 2],
        predicted=_unpacked(columns[:, 3], columns[:, 4], sentences),
        # The gold side counts over the sentences that have gold (a drawn turn may hold a sentence the source
        # left unlabelled): its "sentences" are the gold sentences, not all of the turn's.
        gold=_unpacked(columns[:, 5], columns[:, 6], columns[:, 2]),
    )
