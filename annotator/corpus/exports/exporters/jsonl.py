"""The project's JSONL export: one turn per line (docs/jsonl-format.md).

The line is assembled from encoded pieces rather than by encoding one dict per
turn: objects that repeat (a dialogue for all its turns, the few distinct gold
objects) are encoded once, and a sentence's fixed fields are formatted
directly. The result is the same as ``json.dumps(turn, ensure_ascii=False,
separators=(",", ":"))``; ``tests/test_export.py`` checks the bytes round trip.
"""

import json
from json.encoder import encode_basestring

from annotator.corpus.exports.selectors import export_turns
from annotator.domain.protocol.document import COGNIBENCH
from annotator.projects.protocols import protocol_for

_encode = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode


class _Memo:
    """Encodings of shared objects, by identity (the object is kept so that its id stays its own)."""

    def __init__(self, limit=1_000):
        self.items, self.limit = {}, limit

    def __call__(self, obj):
        hit = self.items.get(id(obj))
        if hit is not None and hit[0] is obj:
            return hit[1]
        if len(self.items) >= self.limit:
            self.items.clear()
        text = _encode(obj)
        self.items[id(obj)] = (obj, text)
        return text


def _sentence(s, memo):
    gold = "null" if s["gold"] is None else memo(s["gold"])
    annotations = _encode(s["annotations"]) if s["annotations"] else "[]"
    adjudication = "null" if s["adjudication"] is None else _encode(s["adjudication"])
    text = (f'{{"index":{s["index"]:d},"start":{s["start"]:d},"end":{s["end"]:d},"text":{encode_basestring(s["text"])},'
            f'"gold":{gold},"annotations":{annotations},"adjudication":{adjudication}')
    if "metadata" in s:
        text += ',"metadata":' + _encode(s["metadata"])
    if "prediction" in s:
        text += ',"prediction":' + _encode(s["prediction"])
    return text + "}"


def jsonl_lines(project, progress=None, min_severity=None):
    """Yield one line per turn, after a header line with the project's protocol unless it is CogniBench's
    built-in one (a file without a header is CogniBench's, as files were before protocols)."""
    protocol = protocol_for(project)
    if protocol != COGNIBENCH:
        yield '{"protocol":' + _encode(protocol.document) + "}\n"
    memo = _Memo()  # gold objects: few distinct ones
    last_dialogue, dialogue_text = None, ""  # a dialogue's turns are consecutive: keep only the last one
    for turn in export_turns(project, progress=progress, min_severity=min_severity):
        if turn["dialogue"] is not last_dialogue:
            last_dialogue, dialogue_text = turn["dialogue"], _encode(turn["dialogue"])
        sentences = ",".join([_sentence(s, memo) for s in turn["sentences"]])
        yield (f'{{"dialogue":{dialogue_text},"turn":{_encode(turn["turn"])},"sentences":[{sentences}],'
               f'"triplets":{_encode(turn["triplets"])}}}\n')
