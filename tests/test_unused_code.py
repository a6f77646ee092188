"""No function or class without a caller: vulture reads the project (tests and benchmarks count as callers),
and what Django, Celery and pytest call by name is allowed: a dotted name in the settings, a management
``Command``, an app's ``*Config``, an admin ``Media``, pytest's and gunicorn's hooks and what a decorator registers."""

import re
from pathlib import Path

import vulture

ROOT = Path(__file__).resolve().parent.parent
SCANNED = ("annotator", "autolabel", "api", "config", "tests", "bench", "manage.py")
KINDS = {"function", "class"}
# Called by a framework through a name or a decorator, never by our code.
FRAMEWORK_NAMES = ["Command", "Media", "*Config", "pytest_*",
                   "post_request"]  # gunicorn's server hook, read from a config file (bench/web_memory_hooks.py)
FRAMEWORK_DECORATORS = ["@register.*", "@app.task", "@shared_task", "@receiver", "@pytest.*", "@admin.*",
                        "@action", "@extend_schema*", "@*.connect"]
SETTINGS_DOTTED_NAME = re.compile(r"""["'](?:annotator|autolabel|api|config)(?:\.\w+)+\.(\w+)["']""")


def names_in_settings() -> list[str]:
    """The last part of every dotted path the settings name (backends, middleware, callables, classes)."""
    found = set()
    for path in (ROOT / "config" / "settings").rglob("*.py"):
        found.update(SETTINGS_DOTTED_NAME.findall(path.read_text()))
    return sorted(found)


def unused_definitions(paths, ignore_names=()) -> list[str]:
    scan = vulture.Vulture(ignore_names=[*FRAMEWORK_NAMES, *ignore_names], ignore_decorators=FRAMEWORK_DECORATORS)
    scan.scavenge([str(path) for path in paths], exclude=["*/migrations/*", "*/vendor/*"])
    return [f"{Path(item.filename).relative_to(ROOT) if Path(item.filename).is_relative_to(ROOT) else item.filename}"
            f":{item.first_lineno}: {item.typ} {item.name}"
            for item in scan.get_unused_code(min_confidence=60) if item.typ in KINDS]


def test_every_function_and_class_has_a_caller():
    unused = unused_definitions([ROOT / name for name in SCANNED], ignore_names=names_in_settings())
    assert not unused, "no caller (remove it, or allow it here if a framework calls it by name):\n" + "\n".join(unused)


def test_the_check_finds_a_function_nobody_calls(tmp_path):
    (tmp_path / "sample.py").write_text(
        "def used():\n    return 1\n\n\ndef forgotten():\n    return 2\n\n\nclass Command:\n    pass\n\n\nused()\n")
    assert [line.split(": ", 1)[1] for line in unused_definitions([tmp_path])] == ["function forgotten"]
    assert "lockout_response" in names_in_settings()
