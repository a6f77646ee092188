"""bench/step_kinds.py measures what it says: two annotators' HalluDetect walks that the protocol accepts, with the
share of disagreements asked for, measured by each kind's metric."""

import numpy as np

from annotator.domain import agreement_kinds
from annotator.domain.protocol.document import load_shipped
from bench.step_kinds import drawn_paths


def test_the_drawn_walks_are_walks_of_the_protocol_and_disagree_as_asked():
    protocol = load_shipped("halludetect")
    first, second = drawn_paths(protocol, 2000, 0.1, np.random.default_rng(7))
    for path in first[:200] + second[:200]:
        protocol.validate(path)
        assert protocol.label_of(path) in ("supported", "unsupported")
    differ = sum(a.get("error_types") != b.get("error_types") for a, b in zip(first, second)) / len(first)
    assert 0.02 < differ < 0.1  # a redrawn sentence keeps its answers by chance sometimes
    severity = protocol.step("severity")
    measured = agreement_kinds.step_agreement(severity, agreement_kinds.path_units(list(zip(first, second)), "severity"))
    assert measured.metric == "ordinal α" and 0.9 < measured.alpha < 1
