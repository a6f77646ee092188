"""No module of the project is longer than 400 lines (docs/architecture.md): a longer one is split by concern, as
the settings were (config/settings/shared/). Migrations are Django's writing, not ours, and are left out; so are
the tests. Pure: the files are read, not imported."""

from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SCANNED = ("annotator", "autolabel", "api", "config", "bench", "manage.py")
MAX_LINES = 400


def long_modules(paths) -> list[str]:
    """``path: lines`` of every Python module under ``paths`` longer than ``MAX_LINES``, migrations aside."""
    found = []
    for top in paths:
        for path in sorted([top] if top.is_file() else top.rglob("*.py")):
            if "migrations" in path.parts:
                continue
            lines = len(path.read_text().splitlines())
            if lines > MAX_LINES:
                found.append(f"{path.relative_to(ROOT) if path.is_relative_to(ROOT) else path}: {lines}")
    return found


def test_no_module_is_longer_than_400_lines():
    assert (ROOT / "config" / "settings" / "base.py").is_file()  # the scan reads the folders it means to
    assert long_modules([ROOT / name for name in SCANNED]) == []


def test_the_check_finds_a_long_module_and_leaves_migrations_out(tmp_path):
    (tmp_path / "long.py").write_text("x = 1\n" * (MAX_LINES + 1))
    (tmp_path / "at_the_limit.py").write_text("x = 1\n" * MAX_LINES)
    (tmp_path / "migrations").mkdir()
    (tmp_path / "migrations" / "0001_initial.py").write_text("x = 1\n" * (MAX_LINES + 1))
    assert long_modules([tmp_path]) == [f"{tmp_path / 'long.py'}: {MAX_LINES + 1}"]
