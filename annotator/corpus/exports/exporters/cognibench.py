"""A ``labels.json`` in the public CogniBench structure, from the project's gold.

One entry per turn that has gold, keyed by the CogniBench record id (the turn's
external id), with the list fields and ``sentence_label_dict``
(lower-cased, whitespace-normalised sentence -> [criteria, sentence index]).
Misleading sentences have an empty criteria list and sit in ``misleading_list``;
unlabelled sentences have an empty list and sit in no list, as in the release.
"""

import json

from annotator.corpus.imports.importers.cognibench import CRITERIA_OF, LIST_FIELDS, LISTS_OF, normalise
from annotator.corpus.exports.selectors import export_turns

_encode = json.JSONEncoder(ensure_ascii=False).encode


def labels_record(turn: dict) -> dict | None:
    sentences = turn["sentences"]
    if not any(s["gold"] and s["gold"]["label"] for s in sentences):
        return None
    lists = {name: [] for name in LIST_FIELDS}
    label_dict = {}
    for sentence in sentences:
        gold = sentence["gold"]
        key = sentence.get("metadata", {}).get("cognibench_key") or normalise(sentence["text"])
        if gold is None or gold["label"] is None:  # none, or an older version's that does not carry over
            label_dict[key] = [[], sentence["index"]]
            continue
        label_dict[key] = [list(CRITERIA_OF[gold["label"]]), sentence["index"]]
        for name in LISTS_OF[gold["label"]]:
            lists[name].append(sentence["text"])
    record = {name: lists[name] for name in LIST_FIELDS}
    record.update(turn["turn"]["metadata"].get("labels", {}))
    record["sentence_label_dict"] = label_dict
    return record


def record_id(turn: dict) -> str:
    t = turn["turn"]
    return t["id"] or t["metadata"].get("id") or f"{turn['dialogue']['id']}_{t['index']}"


def cognibench_pieces(project, progress=None):
    """Yield the text of labels.json piece by piece."""
    yield "{"
    first = True
    for turn in export_turns(project, progress=progress):
        record = labels_record(turn)
        if record is None:
            continue
        yield ("\n" if first else ",\n") + _encode(record_id(turn)) + ": " + _encode(record)
        first = False
    yield "\n}\n"
