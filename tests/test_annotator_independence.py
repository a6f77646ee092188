"""The annotation core never imports the pre-labeler: autolabel builds on annotator, not the other way.

The core reads the pre-labels through the hooks of annotator/extensions.py, which autolabel's
AppConfig.ready() fills. The static imports are an import contract (.importlinter, checked by
tests/test_import_contracts.py); import-linter does not see an import by name at run time
(``import_module("autolabel...")``), which this checks. Pure: the files are read with ``ast``, no database.
"""

import ast
from pathlib import Path

from annotator import extensions

ANNOTATOR = Path(__file__).resolve().parent.parent / "annotator"


def _imported_modules(tree):
    for node in ast.walk(tree):
        if (isinstance(node, ast.Call) and getattr(node.func, "id", getattr(node.func, "attr", None))
              in ("import_module", "__import__") and node.args and isinstance(node.args[0], ast.Constant)):
            yield str(node.args[0].value)


def test_no_module_of_annotator_imports_autolabel_by_name_at_run_time():
    files = sorted(ANNOTATOR.rglob("*.py"))
    assert len(files) > 50  # the walk found the app
    offenders = [
        f"{path.relative_to(ANNOTATOR.parent)}: {module}"
        for path in files
        for module in _imported_modules(ast.parse(path.read_text(encoding="utf-8"), filename=str(path)))
        if module == "autolabel" or module.startswith("autolabel.")
    ]
    assert offenders == []


def test_a_hook_with_nothing_registered_gives_its_empty_answer():
    hook = extensions.Hook("example", dict)
    assert hook("project", [1, 2]) == {}
    hook.register(lambda project, ids: {i: project for i in ids})
    assert hook("p", [1]) == {1: "p"}


def test_the_prelabeler_fills_every_hook_when_the_apps_load():
    assert all(hook.provider is not None for hook in extensions.HOOKS), extensions.HOOKS
