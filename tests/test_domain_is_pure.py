"""The rules in annotator/domain/ use Django only for the vocabulary's choice enums, never its ORM.

What the rules may not import (the database, the web, the queue, the app's features) is an import contract
(.importlinter, checked by tests/test_import_contracts.py). import-linter sees a Django import only as
``django``; this checks the one Django module the rules may use, exactly.
"""

import ast
from pathlib import Path

DOMAIN = Path(__file__).resolve().parent.parent / "annotator" / "domain"
ALLOWED_DJANGO = {"django.db.models.enums"}  # the choice enums of the vocabulary; no ORM


def imported_modules(path):
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and not node.level:
            yield node.module


def test_the_only_django_module_the_rules_import_is_the_choice_enums():
    found = {
        f"{path.name}: {module}"
        for path in DOMAIN.rglob("*.py")
        for module in imported_modules(path)
        if (module == "django" or module.startswith("django.")) and module not in ALLOWED_DJANGO
    }
    assert not found, found
    assert len(list(DOMAIN.rglob("*.py"))) >= 10  # the check reads the folder it means to


def test_reading_a_protocol_loads_no_heavy_library():
    """Every request and every Celery task reads a protocol; NLTK's package loads scikit-learn and SciPy (about
    a second), which only agreement and the learned judge need, so they import it where they use it."""
    import subprocess
    import sys

    probe = ("import sys; import annotator.domain.protocol as p; p.COGNIBENCH.describe(); "
             "print(sorted(m for m in ('nltk', 'sklearn', 'scipy') if m in sys.modules))")
    printed = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True,
                             cwd=DOMAIN.parent.parent).stdout
    assert printed.strip() == "[]"
