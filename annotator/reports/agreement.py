"""Inter-annotator agreement of a project, aggregated in the database.

The database does the heavy part: a self-join of the submitted sentence
annotations grouped by (annotator pair, label pair, batch, day), so Python
receives at most a few thousand rows however many sentences the project has.
``annotator.domain.agreement`` turns those counts into alpha, percent agreement and
kappa. ``project_agreement`` is what both the reports page and
``manage.py iaa_report`` show.
"""

from __future__ import annotations

import datetime
import re
from collections import defaultdict
from contextlib import contextmanager

from django.contrib.auth import get_user_model
from django.core.cache import cache
from django.db import connection, transaction
from django.db.models import Count, Max

from ..models import Assignment, Dialogue, Feedback, GoldLabel, GoldVersion, ImportBatch, Question, SentenceAnnotation, Turn
from ..domain.protocol.groups import reading
from ..projects.protocol_mapping import version_carry
from ..projects.protocols import protocol_for
from . import versions
from .kind_agreement import with_kind_steps


@contextmanager
def reporting_cursor():
    """A cursor for one large aggregate: enough sort/hash memory that it does not spill to disk.

    PostgreSQL's default ``work_mem`` (4 MB) makes the per-sentence GROUP BY of a
    234,000-sentence project spill to temporary files; ``SET LOCAL`` raises it
    for this transaction only. SQLite gets a larger page cache on this connection.
    """
    if connection.vendor == "postgresql":
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.execute(f"SET LOCAL work_mem = '{REPORT_WORK_MEM}'")
            # Compiling these plans costs more than it saves on a query that runs once.
            cursor.execute("SET LOCAL jit = off")
            yield cursor
        return
    with connection.cursor() as cursor:
        if connection.vendor == "sqlite":
            cursor.execute(f"PRAGMA cache_size = -{REPORT_SQLITE_CACHE_KB}")
        yield cursor


REPORT_WORK_MEM = "96MB"
REPORT_SQLITE_CACHE_KB = 65536


def _week(expression: str) -> str:
    """Whole weeks (starting on Monday) since 1970-01-05, the first Monday after the epoch, in SQL."""
    if connection.vendor == "sqlite":
        return f"CAST(((julianday({expression}) - 2440587.5) - 4) / 7 AS INTEGER)"
    return f"CAST(floor((extract(epoch from {expression}) / 86400 - 4) / 7) AS INTEGER)"


EPOCH_MONDAY = datetime.date(1970, 1, 5)
SLOTS = 64  # label codes are packed as annotator_id * SLOTS + label index (a protocol has at most 40 labels)
_LABEL_ID = re.compile(r"^[a-z][a-z0-9_]{0,39}\Z")


def _sql_labels(labels) -> tuple[str, ...]:
    """The labels as SQL literals; a protocol's label ids are identifiers (its validation says so): checked again
    here, since they are written into the statement."""
    if len(labels) >= SLOTS or not all(_LABEL_ID.match(label) for label in labels):
        raise ValueError("a protocol's labels must be at most 40 identifiers")
    return tuple(labels)


def _label_code(column: str, labels) -> str:
    cases = " ".join(f"WHEN '{label}' THEN {i}" for i, label in enumerate(_sql_labels(labels)))
    return f"(CASE {column} {cases} END)"


def _sentence_rows(project, labels, batch_id=None, carry=None):
    """One GROUP BY over the submitted annotations, per sentence, then per kind of sentence.

    Each sentence judged by exactly two annotators is reduced to two packed
    numbers ``annotator_id * 8 + label`` (the smaller is the first annotator),
    with its gold label, batch and the week its second annotation was submitted;
    identical sentences are then counted together. Sentences judged by three or
    more keep their id, so their annotations can be fetched one by one.
    Rows: (first, second, gold label index or NULL, batch, week, sentence id or 0, count).
    With ``carry`` (a project with work under older protocol versions) labels count as the mapping carries them
    over (reports.versions), and annotations whose label does not carry over are left out.
    """
    q = connection.ops.quote_name
    sa, a, t, d, g = (q(m._meta.db_table) for m in (SentenceAnnotation, Assignment, Turn, Dialogue, GoldLabel))
    label_code = lambda column: _label_code(column, labels)  # noqa: E731
    label_list = ", ".join(f"'{label}'" for label in _sql_labels(labels))
    annotation_code, gold_code, kept = label_code('sa.label'), label_code('g.label'), f"sa.label IN ({label_list})"
    if carry is not None and carry.has_older:
        annotation_code = versions.carried_label_code("sa.label", "a.protocol_version_id", labels, carry)
        gold_code, kept = versions.carried_gold_code("g.label", labels, carry), f"{annotation_code} IS NOT NULL"
    batch_filter = "AND d.batch_id = %s" if batch_id is not None else ""
    sql = f"""
        WITH keyed AS (
            SELECT sa.sentence_id AS sentence_id, a.annotator_id * {SLOTS} + {annotation_code} AS k,
                   a.turn_id AS turn_id, a.submitted_at AS submitted_at
            FROM {sa} sa JOIN {a} a ON a.id = sa.assignment_id
            WHERE a.project_id = %s AND a.status = %s AND a.is_qualification = %s AND {kept}
        ),
        per_sentence AS (
            SELECT sentence_id, COUNT(*) AS n, MAX(turn_id) AS turn_id, MIN(k) AS lo, MAX(k) AS hi,
                   MAX(submitted_at) AS last
            FROM keyed
            GROUP BY sentence_id
            HAVING COUNT(*) >= 2
        )
        SELECT p.lo, p.hi, {gold_code}, d.batch_id, {_week('p.last')},
               CASE WHEN p.n = 2 THEN 0 ELSE p.sentence_id END, COUNT(*)
        FROM per_sentence p
        JOIN {t} t ON t.id = p.turn_id
        JOIN {d} d ON d.id = t.dialogue_id
        LEFT JOIN {g} g ON g.sentence_id = p.sentence_id
        WHERE t.is_qualification = %s {batch_filter}
        GROUP BY p.lo, p.hi, {gold_code}, d.batch_id, {_week('p.last')},
                 CASE WHEN p.n = 2 THEN 0 ELSE p.sentence_id END
    """
    params = [project.pk, Assignment.Status.SUBMITTED.value, False, False]
    if batch_id is not None:
        params.append(batch_id)
    with reporting_cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.fetchall()


def _multi_annotations(sentence_ids, labels, carry):
    """(sentence, annotator, label) of the sentences judged by three or more annotators (labels of older
    versions as the mapping carries them over; those that do not carry over left out)."""
    rows = []
    ids = list(sentence_ids)
    read = set(labels) | {label for mapping in carry.carried.values() for label in mapping}
    for start in range(0, len(ids), 500):
        rows.extend(
            (sentence_id, annotator, carry.carry(version_id, label))
            for sentence_id, annotator, version_id, label in SentenceAnnotation.objects.filter(
                sentence_id__in=ids[start:start + 500],
                assignment__status=Assignment.Status.SUBMITTED,
                assignment__is_qualification=False,
                label__in=read,
            ).values_list("sentence_id", "assignment__annotator_id", "assignment__protocol_version_id", "label")
        )
    return [row for row in rows if row[2] in labels]


def _week_label(week):
    if week is None:
        return "unknown"
    monday = EPOCH_MONDAY + datetime.timedelta(weeks=int(week))
    year, number, _ = monday.isocalendar()
    return f"{year}-W{number:02d}"


class _Accumulator:
    """Pair tables and multi-coder counts of one slice of the data (project, batch, week)."""

    def __init__(self, scheme):
        import numpy as np  # NumPy when figures are computed, not in every web worker (issue 49)

        self.scheme = scheme
        n = len(scheme.labels)
        self.shape = (n, n)
        self.two = defaultdict(lambda: np.zeros(self.shape, dtype=np.int64))
        self.multi_pairs = defaultdict(lambda: np.zeros(self.shape, dtype=np.int64))
        self.multi = []

    def add_pair(self, pair, la, lb, count, two=True):
        (self.two if two else self.multi_pairs)[pair][la, lb] += count

    def add_multi(self, counts):
        self.multi.append(counts)

    def measures(self):
        import numpy as np

        from ..domain import agreement

        multi = np.array(self.multi) if self.multi else None
        return agreement.variable_measures(self.scheme, dict(self.two), multi, dict(self.multi_pairs))


def project_agreement(project, batch: ImportBatch | None = None, scale_level: str = "ordinal") -> dict:
    """Every agreement figure of a project (or one import batch), as plain JSON-ready data (a scale step's α at
    ``scale_level``: ordinal, or interval on request)."""
    import numpy as np  # NumPy when figures are computed, not in every web worker (issue 49)

    from ..domain import agreement

    batch_id = batch.pk if batch is not None else None
    carry = version_carry(project)
    read = reading(carry.current)
    scheme = agreement.scheme_of(carry.current)
    n_labels = len(scheme.labels)
    overall = _Accumulator(scheme)
    by_batch: dict = defaultdict(lambda: _Accumulator(scheme))
    by_week: dict = defaultdict(lambda: _Accumulator(scheme))
    pair_units: dict = defaultdict(int)
    pair_agree: dict = defaultdict(int)
    against_gold: dict = defaultdict(lambda: np.zeros((n_labels, n_labels), dtype=np.int64))
    multi_sentences = {}
    for lo, hi, gold, batch_key, week, sentence_id, count in _sentence_rows(project, scheme.labels, batch_id, carry):
        if sentence_id:
            multi_sentences[sentence_id] = (gold, batch_key, week)
            continue
        a, la = divmod(lo, SLOTS)
        b, lb = divmod(hi, SLOTS)
        for accumulator in (overall, by_batch[batch_key], by_week[week]):
            accumulator.add_pair((a, b), la, lb, count)
        pair_units[(a, b)] += count
        if la == lb:
            pair_agree[(a, b)] += count
        if gold is not None:
            against_gold[a][la, gold] += count
            against_gold[b][lb, gold] += count
    per_sentence = defaultdict(list)
    label_index = scheme.label_index
    for sentence_id, annotator, label in _multi_annotations(multi_sentences, scheme.labels, carry):
        per_sentence[sentence_id].append((annotator, label_index[label]))
    for sentence_id, given in per_sentence.items():
        gold, batch_key, week = multi_sentences[sentence_id]
        counts = np.bincount([label for _, label in given], minlength=n_labels)
        accumulators = (overall, by_batch[batch_key], by_week[week])
        for accumulator in accumulators:
            accumulator.add_multi(counts)
        given.sort()
        for i, (a, la) in enumerate(given):
            if gold is not None:
                against_gold[a][la, gold] += 1
            for b, lb in given[i + 1:]:
                for accumulator in accumulators:
                    accumulator.add_pair((a, b), la, lb, 1, two=False)
                pair_units[(a, b)] += 1
                pair_agree[(a, b)] += la == lb

    users = {
        u.pk: u.get_username()
        for u in get_user_model().objects.filter(
            pk__in={a for pair in pair_units for a in pair} | set(against_gold)
        )
    }
    # Confusion between annotators: cell (i, j), i != j, counts the sentence pairs where
    # one said i and the other j, so the table is symmetric; the diagonal counts agreements.
    confusion = np.zeros(overall.shape, dtype=np.int64)
    for source in (overall.two, overall.multi_pairs):
        for table in source.values():
            confusion += table
    symmetric = confusion + confusion.T - np.diag(np.diag(confusion))

    pairs = []
    all_tables = {**{}, **overall.two}
    for pair, table in overall.multi_pairs.items():
        all_tables[pair] = all_tables.get(pair, 0) + table
    for pair, table in sorted(all_tables.items()):
        pairs.append({
            "annotators": [users.get(pair[0], str(pair[0])), users.get(pair[1], str(pair[1]))],
            "units": int(pair_units[pair]),
            "percent": pair_agree[pair] / pair_units[pair] if pair_units[pair] else None,
            "kappa": agreement.cohen_kappa(table),
        })

    batches = {b.pk: b for b in ImportBatch.objects.filter(project=project, pk__in=[k for k in by_batch if k])}
    batch_rows = []
    for key, accumulator in sorted(by_batch.items(), key=lambda item: (item[0] is None, item[0] or 0)):
        label = accumulator.measures()["label"]
        name = str(batches[key]) if key in batches else "no import batch"
        batch_rows.append({"batch_id": key, "batch": name, **label})

    week_rows = [
        {"week": _week_label(week), **accumulator.measures()["label"]}
        for week, accumulator in sorted(by_week.items(), key=lambda item: (item[0] is None, item[0] or 0))
    ]

    measures = overall.measures()
    return {
        "project": project.slug,
        "batch": str(batch) if batch is not None else None,
        "protocol": {"id": read.id, "version": read.version, "name": read.name},
        # Work under older versions of the project's protocol: counted through the mapping, or left out.
        "older_versions": versions.older_versions_note(project, carry),
        "labels": list(scheme.labels),
        # Each step with its kind and the metric used; a protocol's multiple, scale and text steps are measured
        # from the walks (reports.kind_agreement), in the protocol's order.
        "measures": with_kind_steps([
            {"variable": variable, "title": read.step_title(variable), "scope": read.step_scope(variable),
             "kind": "label" if variable == "label" else "choice", "metric": "nominal α", **measures[variable]}
            for variable in scheme.variables
        ], project, carry.current, batch_id, carry, scale_level),
        "confusion": symmetric.tolist(),
        "pairs": pairs,
        "annotators": _annotator_rows(against_gold, pairs, users),
        "batches": batch_rows,
        "weekly": week_rows,
    }


def _annotator_rows(by_annotator, pairs, users):
    """Per annotator: sentences compared, agreement and kappa with co-annotators, accuracy against gold."""
    from ..domain import agreement  # NumPy: see project_agreement

    against_gold = {users.get(a, str(a)): table for a, table in by_annotator.items()}
    rows = {}
    for pair in pairs:
        for name in pair["annotators"]:
            row = rows.setdefault(name, {"annotator": name, "units": 0, "agreed": 0.0, "kappa_sum": 0.0, "kappa_units": 0})
            row["units"] += pair["units"]
            row["agreed"] += (pair["percent"] or 0) * pair["units"]
            if pair["kappa"] is not None:
                row["kappa_sum"] += pair["kappa"] * pair["units"]
                row["kappa_units"] += pair["units"]
    for name in against_gold:
        rows.setdefault(name, {"annotator": name, "units": 0, "agreed": 0.0, "kappa_sum": 0.0, "kappa_units": 0})
    result = []
    for name, row in sorted(rows.items()):
        table = against_gold.get(name)
        result.append({
            "annotator": name,
            "units": row["units"],
            "percent": row["agreed"] / row["units"] if row["units"] else None,
            "kappa": row["kappa_sum"] / row["kappa_units"] if row["kappa_units"] else None,
            "gold_units": int(table.sum()) if table is not None else 0,
            "accuracy": agreement.accuracy(table) if table is not None else None,
        })
    return result


# --------------------------------------------------------------------------- cache


def data_version(project) -> str:
    """Changes whenever the numbers of the reports may change; a handful of indexed lookups.

    The gold services bump ``GoldVersion`` on every change of gold or disputes;
    submitted slots, import batches, questions and feedback are counted too, so
    agreement of partly submitted turns, imported gold and the QA column follow.
    """
    gold = GoldVersion.objects.filter(project=project).values_list("version", flat=True).first() or 0
    submitted = Assignment.objects.filter(project=project, status=Assignment.Status.SUBMITTED).count()
    batches = ImportBatch.objects.filter(project=project).aggregate(n=Count("id"), last=Max("finished_at"))
    last_batch = batches["last"].timestamp() if batches["last"] else 0
    questions = Question.objects.filter(project=project).aggregate(m=Max("id"))["m"]
    feedback = Feedback.objects.filter(project=project).aggregate(m=Max("id"))["m"]
    return f"{gold}-{submitted}-{batches['n']}-{last_batch:.0f}-{questions or 0}-{feedback or 0}"


def _cache_key(project, name: str) -> str:
    # created_at too: a recreated project (ids can be reused after a rollback) must not see old numbers;
    # the project's protocol version and the document's checksum too: figures of one version are not shown for
    # another, even when a lead sets a changed document under the same id and version number.
    created = project.created_at.timestamp() if project.created_at else 0
    protocol = protocol_for(project)
    return f"reports:{project.pk}:{created:.6f}:{project.protocol_version_id or 0}:{protocol.checksum[:16]}:{name}"


def cached(project, name: str, compute, version: str | None = None):
    """``compute()`` once per data version of the project; new gold or submissions change the key.

    The last value computed is also kept under the name alone, with its version, for ``cached_or_older``.
    """
    version = version or data_version(project)
    key = _cache_key(project, name)
    value = cache.get(f"{key}:{version}")
    if value is None:
        value = compute()
        cache.set(f"{key}:{version}", value, timeout=24 * 3600)
        cache.set(f"{key}:latest", (version, value), timeout=30 * 24 * 3600)
    return value


def cached_or_older(project, name: str, version: str):
    """``(value, is_current)``: the value of ``version`` if it was computed, else the latest older one.

    ``(None, False)`` when nothing was ever computed. Reading never computes: the caller decides
    whether to compute now or to show the older value while it is recomputed elsewhere.
    """
    key = _cache_key(project, name)
    value = cache.get(f"{key}:{version}")
    if value is not None:
        return value, True
    latest = cache.get(f"{key}:latest")
    return (latest[1], False) if latest is not None else (None, False)


def project_agreement_cached(project, batch=None, version=None) -> dict:
    name = f"agreement:{batch.pk if batch else 'all'}"
    return cached(project, name, lambda: project_agreement(project, batch), version)

