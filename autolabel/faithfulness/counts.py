"""The per-turn counts of the faithfulness report: one aggregate query over the sentences of a job's turns.

For every finished turn of the job: its generator model, its sentences, its gold sentences, and on each side
(pre-labels, gold): the hallucinated sentences (the protocol's hallucination group), and per family of the
protocol (CogniBench: factual, cognitive) its sentences and its hallucinated ones. A sentence counts by its
label, from the project's protocol; a pre-label whose vote gave no label counts by the vote (hallucinated or
not) and its stage-1 answer (the family every label reachable through that answer belongs to).

Why the counts are packed: ten ``SUM(CASE ...)`` over the 240,000 sentences of a CogniBench-L job took
about twice as long on SQLite as the joins themselves (bench/faithfulness.py). Each sentence's family flags
(in the family, hallucinated in it) are therefore packed into integers, ``FIELD_BITS`` bits per flag and
``FIELDS_PER_SUM`` flags per integer (so that a sum stays within 63 bits), chosen by a single ``CASE label``;
the per-turn ``SUM`` of those integers is unpacked here with numpy. A field holds up to 32,767 sentences per
turn (an LLM response has tens). CogniBench's two families need one such sum per side, as before.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from django.db import connection

from annotator.models import Dialogue, GoldLabel, Sentence, Turn

from annotator.reports.versions import carried_gold_code

from autolabel.evaluation.protocol_views import scoring
from autolabel.models import JobTurn, Prediction

if TYPE_CHECKING:
    import numpy as np

FIELD_BITS = 15
FIELD_MASK = (1 << FIELD_BITS) - 1
FIELDS_PER_SUM = 63 // FIELD_BITS


def hallucinated_in(family_id: str) -> str:
    """The count name of a family's hallucinated sentences (the family's own count is named by its id)."""
    return f"{family_id}_hallucinated"


def packed_counts(protocol) -> tuple:
    """The packed count names, in packing order: per family, its sentences then its hallucinated ones."""
    return tuple(name for family in scoring(protocol).families for name in (family.id, hallucinated_in(family.id)))


def _place(protocol, count: str) -> tuple[int, int]:
    """(which packed sum, the flag's value in it) of one count."""
    index = packed_counts(protocol).index(count)
    return index // FIELDS_PER_SUM, 1 << (FIELD_BITS * (index % FIELDS_PER_SUM))


def _sums(protocol) -> int:
    return max(1, -(-len(packed_counts(protocol)) // FIELDS_PER_SUM))


def packed_flags(protocol, label: str) -> list[int]:
    """The packed flags of one label, one integer per packed sum (0 for a label in no family)."""
    read = scoring(protocol)
    flags = [0] * _sums(protocol)
    family = next((f for f in read.families if label in f.labels), None)
    if family is not None:
        for count in (family.id, hallucinated_in(family.id)) if label in read.hallucinated else (family.id,):
            which, bit = _place(protocol, count)
            flags[which] += bit
    return flags


def _label_case(protocol, column: str, which: int, unlabelled: str = "0") -> tuple[str, list]:
    """``CASE column WHEN label THEN flags ... ELSE unlabelled END`` for one packed sum (labels as parameters)."""
    whens, params = [], []
    for label in protocol.labels:
        whens.append(f"WHEN %s THEN {packed_flags(protocol, label)[which]}")
        params.append(label)
    return f"CASE {column} {' '.join(whens)} ELSE {unlabelled} END", params


def _stage_one_families(protocol) -> list[tuple[str, object]]:
    """(kind, its family) for the kinds a pre-label without a label can carry: the family its samples' stage one
    led into (``Prediction.stage1_kind``, CogniBench: factual, cognitive), and the stage-one answers whose labels
    all lie in one family (what a kind held before jobs recorded families)."""
    read = scoring(protocol)
    kinds = {family.id: family for family in read.families}
    onward = {answer.value for step in protocol.steps for answer in protocol.step(step).answers if answer.next}
    for answer in sorted(onward - set(kinds)):
        if (family := read.family_of_kind(answer)) is not None:
            kinds[answer] = family
    return list(kinds.items())


def _unlabelled_prediction(protocol, p: str, which: int) -> tuple[str, list]:
    """The flags (in one packed sum) of a pre-label without a label: its stage-1 answer's family, and that
    family's hallucination if the vote says hallucinated."""
    read = scoring(protocol)
    whens, params = [], []
    for kind, family in _stage_one_families(protocol):
        in_sum, in_bit = _place(protocol, family.id)
        family_flag = in_bit if in_sum == which else 0
        hallucinated_flag = 0
        if set(family.labels) & read.hallucinated:
            h_sum, h_bit = _place(protocol, hallucinated_in(family.id))
            hallucinated_flag = h_bit if h_sum == which else 0
        whens.append(f"WHEN {p}.stage1_kind = %s THEN {family_flag} + "
                     f"(CASE WHEN {p}.hallucinated THEN {hallucinated_flag} ELSE 0 END)")
        params.append(kind)
    return (f"(CASE {' '.join(whens)} ELSE 0 END)" if whens else "0"), params


def turn_counts_sql(protocol, carry=None) -> tuple[str, list]:
    """The statement and its parameters before the two job ids. Table names are the models' own.

    With ``carry`` (``version_carry`` as of ``protocol``'s version, in a project with several versions) a gold
    label counts as the version's mapping carries it over to ``protocol``, and gold that does not carry over
    (an older label mapped to null, or a label of a later version) counts as no gold; without it, the
    statement is the one it always was."""
    gold_label = "g.label"
    if carry is not None and carry.has_older:
        gold_label = carried_gold_code("g.label", protocol.labels, carry, as_label=True)
    q = connection.ops.quote_name
    table = {m: q(m._meta.db_table) for m in (JobTurn, Turn, Dialogue, Sentence, Prediction, GoldLabel)}
    predicted, gold, params_predicted, params_gold = [], [], [], []
    for which in range(_sums(protocol)):
        unlabelled, unlabelled_params = _unlabelled_prediction(protocol, "p", which)
        # A sentence without a prediction (a turn cut short) counts as no label, not hallucinated.
        case, case_params = _label_case(protocol, "p.label", which,
                                        f"(CASE WHEN p.label = '' THEN {unlabelled} ELSE 0 END)")
        predicted.append(f"SUM({case})")
        params_predicted += [*case_params, *unlabelled_params]
        case, case_params = _label_case(protocol, gold_label, which)
        gold.append(f"SUM({case})")
        params_gold += case_params
    hallucination = sorted(scoring(protocol).hallucinated)
    in_group = ", ".join(["%s"] * len(hallucination)) or "NULL"
    sql = (
        f"SELECT jt.turn_id, MAX(d.generator_model), COUNT(s.id), "
        f"{'COUNT(g.id)' if gold_label == 'g.label' else f'COUNT({gold_label})'}, "
        f"SUM(CASE WHEN p.hallucinated THEN 1 ELSE 0 END), {', '.join(predicted)}, "
        f"SUM(CASE WHEN {gold_label} IN ({in_group}) THEN 1 ELSE 0 END), {', '.join(gold)} "
        f"FROM {table[JobTurn]} jt JOIN {table[Turn]} t ON t.id = jt.turn_id "
        f"JOIN {table[Dialogue]} d ON d.id = t.dialogue_id "
        f"JOIN {table[Sentence]} s ON s.turn_id = jt.turn_id "
        f"LEFT JOIN {table[Prediction]} p ON p.sentence_id = s.id AND p.job_id = %s "
        f"LEFT JOIN {table[GoldLabel]} g ON g.sentence_id = s.id "
        f"WHERE jt.job_id = %s AND jt.done "
        # One model per turn (MAX picks it); grouping by the turn alone follows the job's (job, turn) index.
        f"GROUP BY jt.turn_id"
    )
    return sql, [*params_predicted, *hallucination, *params_gold]


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


def _unpacked(protocol, hallucinated: np.ndarray, packed: np.ndarray, sentences: np.ndarray) -> dict[str, np.ndarray]:
    """The counts of one side from its hallucinated column and its packed sums (one column each)."""
    import numpy as np  # here, not at the top: the URLconf reads this module, no web worker needs NumPy (issue 49)

    counts = {"hallucinated": hallucinated, "sentences": sentences}
    for index, count in enumerate(packed_counts(protocol)):
        counts[count] = (packed[:, index // FIELDS_PER_SUM] >> (FIELD_BITS * (index % FIELDS_PER_SUM))) & FIELD_MASK
    # The sentences in some family (CogniBench: the relevant ones, factual or cognitive).
    counts["relevant"] = sum((counts[family.id] for family in scoring(protocol).families), np.zeros_like(sentences))
    return counts


def read_turn_table(job, protocol, chunk: int = 5000, carry=None) -> TurnTable:
    """The per-turn counts under ``protocol``, fetched in chunks straight into integer arrays (a 24,000-turn job
    holds no list of 24,000 row tuples); models are kept as small integer codes. ``carry``: turn_counts_sql."""
    import numpy as np  # see _unpacked

    sql, params = turn_counts_sql(protocol, carry)
    sums = _sums(protocol)
    width = 3 + 2 * (1 + sums)
    chunks, codes, model_names = [], [], {}
    with connection.cursor() as cursor:
        cursor.execute(sql, [*params, job.pk, job.pk])
        while rows := cursor.fetchmany(chunk):
            chunks.append(np.array([(r[0], *r[2:]) for r in rows], dtype=np.int64))
            codes.extend(model_names.setdefault(row[1], len(model_names)) for row in rows)
    columns = np.concatenate(chunks) if chunks else np.zeros((0, width), dtype=np.int64)
    predicted_at, gold_at = 3, 4 + sums  # each side: its hallucinated column, then its packed sums
    if len(columns) and columns[:, 1].max() > FIELD_MASK:
        raise ValueError(f"a turn of job {job.pk} has more than {FIELD_MASK} sentences")
    sentences = columns[:, 1]
    return TurnTable(
        turn_ids=columns[:, 0], model_codes=np.array(codes, dtype=np.int64),
        model_names={code: name for name, code in model_names.items()},
        sentences=sentences, gold_sentences=columns[:, 2],
        predicted=_unpacked(protocol, columns[:, predicted_at], columns[:, predicted_at + 1:gold_at], sentences),
        # The gold side counts over the sentences that have gold (a drawn turn may hold a sentence the source
        # left unlabelled): its "sentences" are the gold sentences, not all of the turn's.
        gold=_unpacked(protocol, columns[:, gold_at], columns[:, gold_at + 1:gold_at + 1 + sums], columns[:, 2]),
    )
