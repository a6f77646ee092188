"""What a page says of a protocol, in the document's own words: lists of its label and answer names, the
answers that need evidence, the question its y / n keys answer. Pure; each feature passes the protocol's
reading (``protocol.groups.reading``), so that no page speaks one protocol's names under another."""

from __future__ import annotations

from collections.abc import Iterable


def name_list(names: Iterable[str], conjunction: str = "or") -> str:
    """"A", "A or B", "A, B or C"; "" for none."""
    names = [name for name in names if name]
    if len(names) < 2:
        return "".join(names)
    return f"{', '.join(names[:-1])} {conjunction} {names[-1]}"


def label_names(read, labels: Iterable[str], conjunction: str = "or") -> str:
    """The names of ``labels``, in the document's order."""
    wanted = set(labels)
    return name_list([read.label_name(label) for label in read.labels if label in wanted], conjunction)


def evidence_wording(read) -> str:
    """The answers and labels that need evidence when the project requires it, in the document's words:
    "“Supported” to “Does the reference support it?”", or "" when none does."""
    answers = [f"“{read.answer_names[pair]}” to “{read.step_questions[step]}”"
               for step in read.steps for pair in sorted(read.evidence_answers) if pair[0] == step]
    labels = [f"the label “{read.label_name(label)}”" for label in read.labels if label in read.evidence_labels]
    return name_list(answers + labels)


def yes_no_example(read) -> str:
    """The first step's question and the answer its y key gives: ("Is the sentence relevant?", "Relevant");
    ("", "") when it has no y answer."""
    step = read.start or (read.steps[0] if read.steps else "")
    for option in read.step_options.get(step, ()):
        if option.get("yn") == "y":
            return read.step_questions[step], option["label"]
    for other in read.steps:
        for option in read.step_options.get(other, ()):
            if option.get("yn") == "y":
                return read.step_questions[other], option["label"]
    return "", ""
