"""A fixed, seeded CogniBench dataset for the evaluation and the faithfulness report, and their figures on it.

``tests/test_protocol_evaluation.py`` compares today's figures with those the code gave before the evaluation
and the faithfulness report read the project's protocol (``tests/data/cognibench_evaluation_pinned.json``,
written once by ``figures()`` on the code of that time). The votes look like the parser's: a label with its
hallucination and stage-1 kind, a cognitive sample without its stage 2 (no label), and abstentions.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

PINNED = Path(__file__).parent / "data" / "cognibench_evaluation_pinned.json"
LABELS = ["irrelevant", "faithful", "invented", "misleading", "speculative", "reliable", "unequivocal"]
HALLUCINATED = {"invented", "misleading", "speculative"}
KIND = {"irrelevant": None, "faithful": "factual", "invented": "factual"}
ABSTAIN = {"label": None, "hallucinated": None, "kind": None}


def vote(label):
    return {"label": label, "hallucinated": label in HALLUCINATED, "kind": KIND.get(label, "cognitive")}


def _sample(rng: random.Random, gold: str, skill: float, stage_two_lost: bool) -> dict:
    roll = rng.random()
    if roll < 0.06:
        return dict(ABSTAIN)
    if roll < 0.12:  # cognitive at stage 1, no stage 2 reply: no label, stage 1's verdict counts
        return {"label": None, "hallucinated": rng.random() < 0.5, "kind": "cognitive"}
    sampled = vote(gold if rng.random() < skill else rng.choice(LABELS))
    if stage_two_lost and sampled["kind"] == "cognitive":  # the sentence's stage 2 request failed
        sampled["label"] = None
    return sampled


def turns(seed: int = 24, count: int = 40):
    """(generator model, [(words, gold, votes of job A, votes of job B), ...]) per turn; B is the weaker judge."""
    rng = random.Random(seed)
    found = []
    for n in range(count):
        sentences = []
        for _ in range(rng.randint(2, 7)):
            gold = rng.choices(LABELS, weights=[1, 5, 2, 1, 2, 2, 2])[0]
            lost = rng.random() < 0.15
            sentences.append((rng.randint(1, 25), gold, [_sample(rng, gold, 0.6, lost) for _ in range(5)],
                              [_sample(rng, gold, 0.4, lost) for _ in range(5)]))
        found.append((("gen-a", "gen-b", "gen-c")[n % 3], sentences))
    return found


def evaluation_figures(protocol) -> dict:
    """The pure figures: the full evaluation of job A (5 samples, threshold 3), its calibration, and A (at 3)
    compared with B (at 2) with their bootstrap intervals."""
    from autolabel.evaluation.calibration import calibration
    from autolabel.evaluation.comparison import compare
    from autolabel.evaluation.scores import Item, evaluate

    data = turns()
    items_a = [[Item(words, gold, a) for words, gold, a, _ in sentences] for _, sentences in data]
    items_b = [[Item(words, gold, b) for words, gold, _, b in sentences] for _, sentences in data]
    flat = [item for turn in items_a for item in turn]
    # Pinned on the code before the protocol, whose evaluate and compare took no protocol (commit 6460359).
    return _jsonable({
        "evaluation": evaluate(protocol, flat, samples=5, threshold=3),
        "calibration": calibration(protocol, flat, 3),
        "comparison": compare(protocol, items_a, 3, items_b, 2, resamples=500),
    })


def faithfulness_job(project):
    """Job A's turns as a finished job of ``project`` with its predictions; every other turn drawn at random,
    and gold on every sentence but one in seven. Returns the job."""
    from annotator.domain.vocabulary import DrawStrategy
    from autolabel.labelling.voting import decide
    from tests.factories_faithfulness import draw, finished_job

    specs, n = [], 0
    for model, sentences in turns():
        rows = []
        for _, gold, votes, _ in sentences:
            decided = decide(votes, 3)
            predicted = decided.label if decided.label else {
                "label": "", "hallucinated": decided.hallucinated, "stage1_kind": decided.kind}
            n += 1
            rows.append((predicted, gold if n % 7 else None))
        specs.append((model, rows))
    job, created = finished_job(project, specs)
    draw(job, created[::2], strategy=DrawStrategy.RANDOM)
    return job


def faithfulness_figures(job) -> dict:
    from autolabel.faithfulness.report import faithfulness_report

    report, _ = faithfulness_report(job)
    return _jsonable(report)


def _jsonable(value):
    return json.loads(json.dumps(value, sort_keys=True))
