"""bench/protocol_walk.py measures what it says: a valid 12-step / 20-label protocol, every path walked."""

from annotator.domain.protocol.document import load_protocol
from bench.protocol_walk import large_document, python_figures


def test_the_large_protocol_has_12_steps_and_20_labels_each_on_one_path():
    protocol = load_protocol(large_document())
    assert (len(protocol.steps), len(protocol.labels)) == (12, 20)
    assert all(protocol.path_for_label(label) for label in protocol.labels)
    assert max(len(path) for path in protocol.paths()) == 12


def test_the_python_figures_walk_every_path_of_each_protocol():
    figures = python_figures(rounds=2)
    assert figures["cognibench"]["keys_per_walk"] == figures["python (before)"]["keys_per_walk"] == 24
    assert (figures["large"]["steps"], figures["large"]["labels"], figures["large"]["paths"]) == (12, 20, 20)
