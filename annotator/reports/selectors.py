"""The reports page's numbers: agreement (from selectors.agreement) and what the project's gold says.

Gold is aggregated in the database: one GROUP BY over (label, turn index,
generator model, position within the turn) returns a few hundred rows for any
project size. ``project_report`` assembles every table the page, the charts
and the CSV downloads use; it is cached per project and data version.
"""

from __future__ import annotations

from collections import defaultdict

from django.db import connection
from django.db.models import Count, Q

from ..access import projects_for, role_in
from ..models import Assignment, Dialogue, GoldLabel, Project, Sentence, SentenceAnnotation, Turn
from ..domain.protocol.groups import rates, rate_of, reading, shown_families
from ..projects.protocol_mapping import version_carry
from ..projects.protocols import protocol_caption, protocol_for
from ..domain.vocabulary import ProtocolMode, Role
from . import versions
from .agreement import cached, cached_or_older, data_version, project_agreement, reporting_cursor

POSITIONS = ("beginning", "middle", "end")


def _gold_rows(project, carry=None):
    """(gold label, turn index, generator model, position bucket 0-2, count) for non-qualification turns.
    With ``carry`` (work under older protocol versions) the label is the current version's it counts as, or
    None where it does not carry over (reports.versions)."""
    q = connection.ops.quote_name
    g, s, t, d = (q(m._meta.db_table) for m in (GoldLabel, Sentence, Turn, Dialogue))
    idx = q("index")
    label = "g.label"
    if carry is not None and carry.has_older:
        label = versions.carried_gold_code("g.label", carry.current.labels, carry, as_label=True)
    sql = f"""
        WITH n AS (
            SELECT s.turn_id AS turn_id, COUNT(*) AS n
            FROM {s} s JOIN {t} t ON t.id = s.turn_id JOIN {d} d ON d.id = t.dialogue_id
            WHERE d.project_id = %s AND t.is_qualification = %s
            GROUP BY s.turn_id
        )
        SELECT {label}, t.{idx}, d.generator_model, (3 * s.{idx}) / n.n AS position, COUNT(*)
        FROM {g} g
        JOIN {s} s ON s.id = g.sentence_id
        JOIN {t} t ON t.id = s.turn_id
        JOIN {d} d ON d.id = t.dialogue_id
        JOIN n ON n.turn_id = s.turn_id
        WHERE d.project_id = %s AND t.is_qualification = %s
        GROUP BY {label}, t.{idx}, d.generator_model, (3 * s.{idx}) / n.n
    """
    with reporting_cursor() as cursor:
        cursor.execute(sql, [project.pk, False, project.pk, False])
        return cursor.fetchall()


def _rates(counts: dict, read) -> dict:
    """The rates a group's gold labels give, as ``protocol.groups.rates`` defines them (the faithfulness report
    takes the same definitions): the hallucination rate over every sentence, each shown family's share of the
    sentences in a family, and the rate within each family that holds hallucinations and other labels."""
    figures = {
        "sentences": sum(counts.values()),
        "relevant": sum(counts.get(label, 0) for label in read.family_labels),
    }
    for rate in rates(read):
        figures[rate.id] = rate_of(rate, counts)
    return figures


def gold_breakdown(project) -> dict:
    """What the labels say: label shares, and rates by turn index, position and generator model. Gold decided
    under an older version of the project's protocol counts as the mapping carries its label over (left out, and
    counted in ``left_out``, where it does not carry over)."""
    carry = version_carry(project)
    read = reading(carry.current)
    left_out = 0
    by_label = defaultdict(int)
    by_turn = defaultdict(lambda: defaultdict(int))
    by_position = defaultdict(lambda: defaultdict(int))
    by_model = defaultdict(lambda: defaultdict(int))
    for label, turn_index, model, position, count in _gold_rows(project, carry):
        if label is None:
            left_out += count
            continue
        by_label[label] += count
        by_turn[turn_index][label] += count
        by_position[POSITIONS[min(int(position), 2)]][label] += count
        by_model[model or "unknown"][label] += count
    total = sum(by_label.values())
    family_counts = {family.id: sum(by_label.get(label, 0) for label in family.labels) for family in read.families}
    labels = []
    for label in read.labels:
        family = read.family_of(label)
        count = by_label.get(label, 0)
        labels.append({
            "label": label,
            "name": read.label_name(label),
            "colour": read.colour(label),
            "count": count,
            "share": count / total if total else None,
            "share_of_kind": count / family_counts[family.id] if family and family_counts[family.id] else None,
        })
    in_families = {label for family in read.families for label in family.labels}
    return {
        "total": total,
        "left_out_by_older_versions": left_out,
        "families": [{"id": family.id, "name": family.name, "colour": family.colour, "count": family_counts[family.id],
                      "labels": list(family.labels)} for family in read.families],
        # Labels outside every family (CogniBench: irrelevant), counted apart in the charts.
        "outside": [label for label in read.labels if label not in in_families] if in_families else [],
        "labels": labels,
        "by_turn": [{"turn": key, **_rates(value, read)} for key, value in sorted(by_turn.items())],
        "by_position": [{"position": key, **_rates(by_position[key], read)} for key in POSITIONS if key in by_position],
        "by_model": [{"model": key, **_rates(value, read)} for key, value in sorted(by_model.items())],
    }


def comparison_candidates(project, user):
    """Projects to compare protocols with: the other protocol mode, led by this user, most shared dialogues first."""
    other_mode = ProtocolMode.INDEPENDENT if project.protocol_mode == ProtocolMode.SEQUENTIAL else ProtocolMode.SEQUENTIAL
    external_ids = Dialogue.objects.filter(project=project).values("external_id")
    candidates = (
        projects_for(user)
        .filter(protocol_mode=other_mode)
        .exclude(pk=project.pk)
        .annotate(shared=Count("dialogues", filter=Q(dialogues__external_id__in=external_ids)))
        .order_by("-shared", "name")
    )
    return [p for p in candidates if role_in(user, p) == Role.LEAD]


def _units_with_labels(project, labels) -> tuple[dict[tuple, list[tuple[int, int]]], int]:
    """A project's submitted labels per unit, a unit named by what it is in the data (dialogue, turn, the
    sentence's characters in the response) so two projects' units can be matched whatever their ids; and how many
    answers of its older protocol versions were left out because their label does not carry over (the others
    count as the version's mapping carries them over, as on the project's own report)."""
    carry = version_carry(project)
    read = set(labels) | {label for mapping in carry.carried.values() for label in mapping}
    units: dict[tuple, list[tuple[int, int]]] = defaultdict(list)
    rows = SentenceAnnotation.objects.filter(
        assignment__project=project, assignment__status=Assignment.Status.SUBMITTED,
        assignment__is_qualification=False, label__in=sorted(read) if carry.has_older else labels,
    ).values_list("sentence__turn__dialogue__external_id", "sentence__turn__index", "sentence__start",
                  "sentence__end", "assignment__annotator_id", "label",
                  # a project that never changed its protocol reads what it always read
                  *(("assignment__protocol_version_id",) if carry.has_older else ()))
    index = {label: i for i, label in enumerate(labels)}
    not_carried = 0
    for external_id, turn_index, start, end, annotator, label, *version in rows.iterator(chunk_size=5000):
        if version and carry.is_older(version[0]):
            label = carry.carry(version[0], label)
            if label is None:
                not_carried += 1
                continue
        units[(external_id, turn_index, start, end)].append((annotator, index[label]))
    return {key: given for key, given in units.items() if len(given) >= 2}, not_carried


def _agreement_on(units: dict, keys: list, n_labels: int) -> dict:
    """Alpha, percent agreement and pooled pairwise kappa of the final labels over the units ``keys``."""
    import numpy as np  # NumPy when figures are computed, not in every web worker (issue 49)

    from ..domain import agreement

    counts = np.zeros((len(keys), n_labels), dtype=np.int64)
    pair_tables: dict = defaultdict(lambda: np.zeros((n_labels, n_labels), dtype=np.int64))
    for row, key in enumerate(keys):
        given = sorted(units[key])
        for i, (a, la) in enumerate(given):
            counts[row, la] += 1
            for b, lb in given[i + 1:]:
                pair_tables[(a, b)][la, lb] += 1
    measured = agreement.measures(counts)
    return {"alpha": measured.alpha, "percent": measured.percent,
            "kappa": agreement.pooled_kappa(pair_tables.values())}


def _shared_unit_measures(project, other) -> dict[int, dict]:
    """Per project: agreement on the units both projects have, and how many of its own units that left out.

    Both projects' annotations are read in full, so the result is cached until either project's data changes (the
    reports page picks a comparison project by itself: without the cache every view would read them again).
    """
    # The two projects' labels compared as one set (the same document in two modes shares every label).
    labels = tuple(dict.fromkeys(reading(protocol_for(project)).labels + reading(protocol_for(other)).labels))

    def compute():
        read = {p.pk: _units_with_labels(p, labels) for p in (project, other)}
        units = {pk: u for pk, (u, _) in read.items()}
        shared = sorted(set(units[project.pk]) & set(units[other.pk]))
        return {pk: {**_agreement_on(u, shared, len(labels)), "units": len(shared), "left_out": len(u) - len(shared),
                     "not_carried_over": read[pk][1]}
                for pk, u in units.items()}

    version = f"{data_version(project)}|{other.pk}:{data_version(other)}"
    return cached(project, f"comparison:{other.pk}", compute, version)


def protocol_comparison(project, other: Project | None, report: dict | None = None) -> list[dict]:
    """Table-1 style rows: each project's protocol, its agreement on the final labels and its QA effort.

    With another project, agreement is measured on the same units in both: the sentences (dialogue, turn,
    characters of the response) that both projects had labelled by at least two annotators, so two imports of
    the same data segmented differently (e.g. CogniBench with and without labels.json) are still compared unit
    for unit; each row says how many of its own units that left out. QA instances (real-time questions +
    post-hoc feedback) per 500 judged statements come from ``selectors.qa.qa_measures``.
    """
    projects = [project] + ([other] if other else [])
    on_shared_units = _shared_unit_measures(project, other) if other else {}
    rows = []
    for p in projects:
        p_report = report if (p.pk == project.pk and report is not None) else project_report(p)
        qa = p_report["qa"]
        if other:
            measured = on_shared_units[p.pk]
        else:
            label = next(m for m in p_report["agreement"]["measures"] if m["variable"] == "label")
            measured = {key: label[key] for key in ("alpha", "percent", "kappa", "units")} | {
                "left_out": 0,
                "not_carried_over": sum(e["left_out"] for e in p_report["agreement"].get("older_versions", []))}
        rows.append({
            "project": p.name,
            "slug": p.slug,
            # Which protocol and version each row covers; older versions' answers count as carried over.
            "protocol": f"{protocol_name(p)}, {p.protocol_mode}" + (
                f" ({measured['not_carried_over']} answers of older versions left out: their label does not carry "
                f"over)" if measured["not_carried_over"] else ""),
            **measured,
            "qa_instances": qa["instances"],
            "qa_per_500": qa["instances_per_500"],
        })
    return rows


def protocol_name(project) -> str:
    """The project's protocol and version, as the reports name what a figure covers."""
    return protocol_caption(project)


def project_report(project, version: str | None = None) -> dict:
    """Everything the reports page shows, cached until gold or the submitted annotations change.

    ``version``: the project's ``data_version`` when the caller has just read it.
    """
    version = version or data_version(project)

    def compute():
        from ..qa.selectors import qa_measures

        return {
            "version": version,
            "agreement": project_agreement(project),
            "gold": gold_breakdown(project),
            "qa": qa_measures(project),
        }

    return cached(project, "report", compute, version)


def project_report_or_older(project) -> tuple[dict | None, bool, str]:
    """``(report, is_current, current version)`` without computing anything (see ``cached_or_older``).

    The page shows an older report at once while the current one is computed in the background:
    at 234,000 sentences a recomputation takes seconds, which a lead should not wait for on every new gold.
    """
    version = data_version(project)
    report, is_current = cached_or_older(project, "report", version)
    return report, is_current, version


def rate_columns(read) -> list[tuple[str, str]]:
    """(header, key) of the rate tables: sentences, those in a family, then every rate of
    ``protocol.groups.rates`` with its denominator named (CogniBench: cognitive share, hallucination rate, the
    factual and cognitive rates)."""
    return ([("Sentences with gold", "sentences"), ("Sentences in a family", "relevant")]
            + [(rate.header, rate.id) for rate in rates(read)])


PERCENT_COLUMNS = {"Percent agreement", "Accuracy against gold", "Share of all", "Share within its kind",
                   "Hallucination rate"}
MEASURE_COLUMNS = {"Krippendorff's alpha", "Cohen's kappa"}
COUNT_COLUMNS = {"Units", "Own units left out", "Left out (label reached by several paths)", "Sentences compared", "Sentences with gold", "Sentences in a family",
                 "Sentences", "QA instances",
                 "QA instances per 500 statements"}


def report_tables(report: dict, read, comparison: list[dict] | None = None) -> dict[str, dict]:
    """Every table of the page: title, header and raw rows; the page formats them, the CSV keeps them raw.

    ``read``: the project's protocol reading (label names, families)."""
    agreement = report["agreement"]
    gold = report["gold"]
    columns = rate_columns(read)
    rate_header, rate_keys = [header for header, _ in columns], [key for _, key in columns]
    names = read.label_names
    measure_cols = ["Units", "Krippendorff's alpha", "Percent agreement", "Cohen's kappa"]
    tables = {
        "agreement": {
            "title": "Agreement per protocol step",
            # "Left out": sentences a step could not count because a label given there is reached by several paths
            # that answer the step differently (e.g. answers carried over to such a label from an older version).
            # "Kind" and "Metric": a step's kind says which α it gets (nominal for a choice, ordinal for a scale,
            # MASI and per-answer for a multiple step; a text step is counted only: domain.agreement_kinds).
            "header": ["Variable", "Compared over"] + measure_cols + ["Left out (label reached by several paths)",
                                                                      "Kind", "Metric"],
            "rows": [[m["title"], m["scope"], m["units"], m["alpha"], m["percent"], m["kappa"], m.get("left_out", 0),
                      m.get("kind", "choice"), m.get("metric", "nominal α")]
                     for m in agreement["measures"]],
        },
        "weekly": {
            "title": "Agreement on the final label by week",
            "header": ["Week"] + measure_cols,
            "rows": [[w["week"], w["units"], w["alpha"], w["percent"], w["kappa"]] for w in agreement["weekly"]],
        },
        "batches": {
            "title": "Agreement on the final label by import batch",
            "header": ["Import batch"] + measure_cols,
            "rows": [[b["batch"], b["units"], b["alpha"], b["percent"], b["kappa"]] for b in agreement["batches"]],
        },
        "pairs": {
            "title": "Annotator pairs",
            "header": ["Annotator A", "Annotator B", "Units", "Percent agreement", "Cohen's kappa"],
            "rows": [[p["annotators"][0], p["annotators"][1], p["units"], p["percent"], p["kappa"]] for p in agreement["pairs"]],
        },
        "annotators": {
            "title": "Annotators",
            "header": ["Annotator", "Sentences compared", "Percent agreement", "Cohen's kappa",
                       "Sentences with gold", "Accuracy against gold"],
            "rows": [[a["annotator"], a["units"], a["percent"], a["kappa"], a["gold_units"], a["accuracy"]]
                     for a in agreement["annotators"]],
        },
        "confusion": {
            "title": "Confusion between annotators (sentence pairs)",
            "header": ["Label"] + [names.get(label, label) for label in agreement["labels"]],
            "rows": [[names.get(label, label)] + row for label, row in zip(agreement["labels"], agreement["confusion"])],
        },
        "labels": {
            "title": "Gold labels",
            "header": ["Label", "Sentences", "Share of all", "Share within its kind"],
            "rows": [[row["name"], row["count"], row["share"], row["share_of_kind"]] for row in gold["labels"]],
        },
        "turn_index": {
            "title": "By turn index",
            "header": ["Turn index"] + rate_header,
            "rows": [[row["turn"]] + [row[k] for k in rate_keys] for row in gold["by_turn"]],
        },
        "position": {
            "title": "By position within the turn",
            "header": ["Position"] + rate_header,
            "rows": [[row["position"]] + [row[k] for k in rate_keys] for row in gold["by_position"]],
        },
        "model": {
            "title": "By generator model",
            "header": ["Generator model"] + rate_header,
            "rows": [[row["model"]] + [row[k] for k in rate_keys] for row in gold["by_model"]],
        },
    }
    if comparison is not None:
        tables["protocols"] = {
            "title": "Protocol comparison (final label)",
            "header": ["Project", "Protocol"] + measure_cols + ["Own units left out", "QA instances",
                                                                "QA instances per 500 statements"],
            "rows": [[r["project"], r["protocol"], r["units"], r["alpha"], r["percent"], r["kappa"], r["left_out"],
                      r["qa_instances"], r["qa_per_500"]] for r in comparison],
        }
    for name, table in tables.items():
        table["kinds"] = [
            "percent" if column in PERCENT_COLUMNS or " share (" in column or " rate (" in column
            else "measure" if column in MEASURE_COLUMNS
            else "count" if column in COUNT_COLUMNS or (name == "confusion" and position > 0)
            else "text"
            for position, column in enumerate(table["header"])
        ]
        table["cells"] = [list(zip(row, table["kinds"])) for row in table["rows"]]
    return tables
