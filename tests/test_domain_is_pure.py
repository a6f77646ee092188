"""The rules in annotator/domain/ import nothing of the database, the web or the task queue."""

import ast
from pathlib import Path

DOMAIN = Path(__file__).resolve().parent.parent / "annotator" / "domain"
ALLOWED_DJANGO = {"django.db.models.enums"}  # the choice enums of the vocabulary; no ORM
FORBIDDEN_PREFIXES = ("django", "rest_framework", "celery", "annotator.", "autolabel", "api")


def imported_modules(path):
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                yield "annotator." + ("domain." if node.level == 1 else "") + (node.module or "")
            else:
                yield node.module


def test_no_domain_module_imports_the_orm_the_web_or_the_queue():
    found = {
        f"{path.name}: {module}"
        for path in DOMAIN.glob("*.py")
        for module in imported_modules(path)
        if module not in ALLOWED_DJANGO and module.startswith(FORBIDDEN_PREFIXES)
        and not module.startswith("annotator.domain.")
    }
    assert not found, found
    assert len(list(DOMAIN.glob("*.py"))) >= 10  # the check reads the folder it means to
