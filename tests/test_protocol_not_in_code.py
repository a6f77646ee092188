"""No label, step or answer of CogniBench's is named in the code outside its document and its importer/exporter:
everything else reads the project's protocol (``protocol_for(project)``).

Python (annotator/, autolabel/, api/) is read as syntax trees: importing CogniBench's vocabulary of labels,
steps, answers and their groups, or the old CogniBench-only module, is refused, and so is a string equal to one
of CogniBench's label, step or answer ids (docstrings and OpenAPI examples, which illustrate the built-in
protocol, aside). Templates and browser scripts are searched for those ids quoted or as a chip class.
"""

import ast
import json
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
COGNIBENCH = json.loads((ROOT / "annotator" / "protocols" / "cognibench.json").read_text())

# CogniBench's ids that no other code may spell. Answers that are plain words of any protocol ("yes", "no",
# "relevant") and the step id "kind" (a common word of the code) are left out.
IDS = ({label["id"] for label in COGNIBENCH["labels"]} | {step["id"] for step in COGNIBENCH["steps"]}
       | {answer["value"] for step in COGNIBENCH["steps"] for answer in step["answers"]}) - {"yes", "no", "relevant", "kind"}
VOCABULARY_NAMES = {
    "Label", "Step", "Answer", "FACTUAL_LABELS", "COGNITIVE_LABELS", "HALLUCINATED_LABELS",
    "COGNITIVE_HALLUCINATED_LABELS", "STEP_ANSWERS", "YES_NO_KEYS", "COGNITIVE_CRITERIA", "SEVERITY_LABELS",
    "ERROR_TYPE_LABELS", "LABEL_DEFINITIONS", "STEP_DEFINITIONS",
}

# The short allow-list: CogniBench's own document and what reads or writes its native format.
ALLOWED = {
    "annotator/domain/vocabulary.py",  # the CogniBench names, kept for its importer and the built-in document
    "annotator/domain/definitions.py",  # their wording (the built-in document's source)
    "annotator/domain/protocol/__init__.py",  # the old CogniBench-only functions, delegating to the built-in document
    "annotator/corpus/importers/cognibench.py",  # CogniBench's released files
    "annotator/corpus/imports/importers/cognibench.py",
    "annotator/corpus/exporters/cognibench.py",
    "annotator/corpus/exports/exporters/cognibench.py",
}
PYTHON_ROOTS = ("annotator", "autolabel", "api")


def _docstrings(tree) -> set[int]:
    found = set()
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(body, list) and body and isinstance(body[0], ast.Expr) \
                and isinstance(body[0].value, ast.Constant) and isinstance(body[0].value.value, str):
            found.add(id(body[0].value))
    return found


def _examples(tree) -> set[int]:
    """Constants inside OpenAPI examples: ``OpenApiExample(...)`` and the schema decorators' calls
    (``extend_schema``, ``_action_schema``...), and ``*_EXAMPLE(S)`` assignments."""
    found = set()
    for node in ast.walk(tree):
        called = getattr(node.func, "id", getattr(node.func, "attr", "")) if isinstance(node, ast.Call) else ""
        is_example = called == "OpenApiExample" or "schema" in called \
            or (isinstance(node, ast.Assign) and any(getattr(t, "id", "").endswith(("_EXAMPLE", "_EXAMPLES")) for t in node.targets))
        if is_example:
            found.update(id(inner) for inner in ast.walk(node) if isinstance(inner, ast.Constant))
    return found


def python_findings(path: Path) -> list[str]:
    tree = ast.parse(path.read_text())
    skip = _docstrings(tree) | _examples(tree)
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            module = node.module or ""
            if module.endswith("vocabulary") or module.endswith("definitions"):
                names = [alias.name for alias in node.names if alias.name in VOCABULARY_NAMES]
                if names:
                    found.append(f"line {node.lineno}: imports {', '.join(names)}")
            if module.endswith("domain.protocol") or (module.endswith("domain") and any(
                    alias.name == "protocol" for alias in node.names)):
                found.append(f"line {node.lineno}: imports the CogniBench-only module annotator.domain.protocol")
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in IDS \
                and id(node) not in skip:
            found.append(f"line {node.lineno}: names {node.value!r}")
    return found


def test_python_names_no_cognibench_label_or_step_outside_its_document():
    findings = {}
    for root in PYTHON_ROOTS:
        for path in sorted((ROOT / root).rglob("*.py")):
            relative = path.relative_to(ROOT).as_posix()
            if "/migrations/" in relative or relative in ALLOWED:
                continue
            problems = python_findings(path)
            if problems:
                findings[relative] = problems
    assert not findings, "\n".join(f"{name}: {'; '.join(problems)}" for name, problems in findings.items())


QUOTED = re.compile(r"""(?:["'](%s)["']|chip-(%s)\b)""" % ("|".join(sorted(IDS)), "|".join(sorted(IDS))))


def test_templates_and_scripts_name_no_cognibench_label_or_step():
    findings = []
    for folder, pattern in (("templates", "*.html"), ("static/js", "*.js")):
        for path in sorted((ROOT / folder).rglob(pattern)):
            if "/vendor/" in path.as_posix():
                continue
            for number, line in enumerate(path.read_text().splitlines(), start=1):
                for match in QUOTED.finditer(line):
                    findings.append(f"{path.relative_to(ROOT)}:{number}: {match.group(0)}")
    assert not findings, "\n".join(findings)


def test_the_check_sees_what_it_means_to_refuse(tmp_path):
    """The checks find a named label, an imported CogniBench group and the old module (they can fail)."""
    sample = tmp_path / "sample.py"
    sample.write_text('from ..domain.vocabulary import HALLUCINATED_LABELS\nfrom ..domain import protocol\n'
                      'def f(label):\n    """A docstring may say invented."""\n    return label == "invented"\n')
    problems = python_findings(sample)
    assert len(problems) == 3 and "'invented'" in problems[2]
    assert QUOTED.search('<span class="chip chip-speculative">') and QUOTED.search("x === 'grounded'")
    assert {"faithful", "invented", "relevance", "grounded", "factual"} <= IDS
