"""A protocol document's canonical form: every default written out, in a fixed key order.

Two documents that mean the same protocol have the same canonical form (and checksum), and the canonical form
loads back to itself, so ``protocol_show`` output given to ``protocol_set`` is accepted unchanged.
"""

from .kinds import KINDS, kind_of

MODES = ("sequential", "independent")


def canonical(document: dict) -> dict:
    """The document with every default written out, in a fixed key order: it loads back to itself."""
    label_ids = [label["id"] for label in document["labels"]]
    # A choice step's canonical form has no "kind": documents written before step kinds keep their bytes.
    steps = [KINDS[kind_of(step)].canonical(step) for step in document["steps"]]
    labels = [
        {"id": label["id"], "name": label["name"], "definition": label.get("definition", ""),
         "examples": list(label.get("examples", [])), "colour": label.get("colour", _DEFAULT_COLOURS[n % len(_DEFAULT_COLOURS)]),
         "key": label.get("key") or (str(n + 1) if n < 9 else ""), "requires_evidence": bool(label.get("requires_evidence", False))}
        for n, label in enumerate(document["labels"])
    ]
    groups = document.get("groups") or {}
    evaluation = groups.get("evaluation") or {}
    canonical_groups = {
        "hallucination": list(groups.get("hallucination", [])),
        "families": [{"id": f["id"], "name": f["name"], "colour": f.get("colour", "#37474f"), "labels": list(f["labels"])}
                     for f in groups.get("families", [])],
        "evaluation": {
            "views": [{"id": v["id"], "name": v["name"], "positive": list(v["positive"]),
                       "scope": list(v.get("scope", label_ids))} for v in evaluation.get("views", [])],
            "macro": {"id": evaluation["macro"]["id"], "name": evaluation["macro"]["name"],
                      "views": list(evaluation["macro"]["views"])} if evaluation.get("macro") else None,
        },
        "agreement_steps": list(groups.get("agreement_steps", [s["id"] for s in document["steps"]])),
        "stage_two_steps": list(groups.get("stage_two_steps", [])),
        "severity": list(groups.get("severity", [])),
        "error_type": list(groups.get("error_type", [])),
    }
    if canonical_groups["evaluation"]["macro"] is None:
        del canonical_groups["evaluation"]["macro"]
    return {"id": document["id"], "version": document["version"], "name": document["name"],
            "description": document.get("description", ""), "modes": list(document.get("modes", MODES)),
            "start": document["start"], "steps": steps, "labels": labels, "groups": canonical_groups}


# Colours for labels a document gives none (distinct, white text readable on each).
_DEFAULT_COLOURS = ["#1f5fbf", "#b34a00", "#2e7d32", "#ad1457", "#6a1b9a", "#00838f", "#5d4037", "#c62828", "#455a64"]
