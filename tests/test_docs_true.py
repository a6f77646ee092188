"""What the repository says of itself stays true: no tracked file holds a merge's conflict markers (a committed
conflict leaves readers two contradicting texts), and docs/architecture.md lists exactly the migrations there are."""

import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# Spelled from parts, so that this file does not hold the markers it looks for.
CONFLICT_MARKER = re.compile("^(?:%s|%s|%s)(?: |$)" % ("<" * 7, ">" * 7, r"\|" * 7), re.MULTILINE)
MIGRATION_LINE = re.compile(r"^- `(?P<app>\w+)`: (?P<names>.*)$", re.MULTILINE)
MIGRATION_APPS = ("annotator", "autolabel")


def conflict_markers(text: str) -> list[int]:
    """The line numbers (from 1) of the lines that open, separate or close a merge conflict."""
    return [text.count("\n", 0, match.start()) + 1 for match in CONFLICT_MARKER.finditer(text)]


def documented_migrations(architecture: str) -> dict[str, list[str]]:
    section = architecture[architecture.index("Migrations, one per change"):]
    section = section[:section.index("\n\n", section.index("\n- "))]
    return {match["app"]: re.findall(r"`(\d{4}_\w+)`", match["names"]) for match in MIGRATION_LINE.finditer(section)}


def migrations_on_disk(app: str) -> list[str]:
    return sorted(path.stem for path in (ROOT / app / "migrations").glob("[0-9][0-9][0-9][0-9]_*.py"))


def test_no_tracked_file_holds_conflict_markers():
    tracked = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout
    findings = []
    for name in tracked.decode().split("\0"):
        path = ROOT / name
        if not name or not path.is_file() or "/vendor/" in name:
            continue
        try:
            text = path.read_text()
        except UnicodeDecodeError:
            continue
        findings += [f"{name}:{line}" for line in conflict_markers(text)]
    assert not findings, "conflict markers in: " + ", ".join(findings)


def test_the_marker_check_finds_a_conflict():
    sample = "intro\n%s HEAD\nours\n=======\ntheirs\n%s branch\n" % ("<" * 7, ">" * 7)
    assert conflict_markers(sample) == [2, 6]
    assert conflict_markers("a heading\n=======\n<<< not a marker\n") == []


def test_architecture_lists_every_migration_and_no_other():
    documented = documented_migrations((ROOT / "docs" / "architecture.md").read_text())
    assert set(documented) == set(MIGRATION_APPS)
    for app in MIGRATION_APPS:
        assert documented[app] == migrations_on_disk(app), f"docs/architecture.md's migrations of {app}"


def test_the_migration_check_reads_the_list():
    sample = ("Migrations, one per change, in order:\n\n- `annotator`: `0001_initial` (the start), `0002_more`.\n"
              "- `autolabel`: `0001_initial`.\n\nNext paragraph `0003_not_a_list`.\n")
    assert documented_migrations(sample) == {"annotator": ["0001_initial", "0002_more"], "autolabel": ["0001_initial"]}
