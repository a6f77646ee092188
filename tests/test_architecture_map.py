"""docs/architecture.md, the one-page map, says what the code is: every package it names exists, every package of
annotator/, autolabel/ and api/ is named, what it says a package imports is all that the import graph (grimp)
shows it importing, the Celery tasks it lists are the registered ones, its contracts are .importlinter's, and it
stays one page (under 8,000 characters, no line over 300). Beside the map: docs/benchmarks.md keeps to the current
figures (under 40,000 characters), and every section of docs/benchmarks.md or docs/autolabel.md that the repository
points to by name ("docs/benchmarks.md, \"Test suite\"") is a heading there. Each check is shown to fail on a planted
wrong claim in a copy of the text. Pure: the code is read, not imported; no database."""

import functools
import re
import subprocess
import sys
from pathlib import Path

import grimp

ROOT = Path(__file__).resolve().parent.parent
MAP = ROOT / "docs" / "architecture.md"
FIRST_PARTY = ("annotator", "autolabel", "api", "config")
MAX_CHARS, MAX_LINE = 8000, 300
BENCHMARKS_MAX_CHARS = 40000
# A pointer to a section by name: docs/autolabel.md, *Definitions*; docs/benchmarks.md ("Test suite"); “The learned judge”.
SECTION_POINTER = re.compile(r"docs/(benchmarks|autolabel)\.md`?(?:'s)?,?\s\(?[\"*“]([^\"*”]{3,120})[\"*”]")

PACKAGE_LINE = re.compile(r"^- (?P<paths>(?:`[^`]+`(?:, )?)+)(?P<rest>(?: \*\*pure\*\*)? — .*)$", re.MULTILINE)
TASK_NAME = re.compile(r"""@shared_task\(\s*name\s*=\s*["']([\w.]+)["']""")
CONTRACT_CLAIM = re.compile(r"^- contract `([\w-]+)`", re.MULTILINE)
CONTRACT_SECTION = re.compile(r"^\[importlinter:contract:([\w-]+)\]", re.MULTILINE)


def package_lines(text: str) -> list[tuple[list[str], str]]:
    """Each package line of the map: the paths it names and what it says after them."""
    return [(re.findall(r"`([^`]+)`", match["paths"]), match["rest"]) for match in PACKAGE_LINE.finditer(text)]


def module_of(path: str) -> str:
    return path.removesuffix("/").removesuffix(".py").replace("/", ".")


def claimed_imports(rest: str) -> list[str] | None:
    """What a line says its package may import (after its last "Imports:"), or None when it says nothing of it."""
    if "Imports:" not in rest:
        return None
    return re.findall(r"`([^`]+)`", rest.rsplit("Imports:", 1)[1])


@functools.cache
def import_graph() -> grimp.ImportGraph:
    sys.path.insert(0, str(ROOT))
    return grimp.build_graph(*FIRST_PARTY, include_external_packages=True, cache_dir=None)


def imports_of(module: str) -> set[str]:
    """Every module (first-party) or top-level package (third-party, not the standard library) that the package or
    module imports directly from outside itself."""
    graph = import_graph()
    own = {name for name in graph.modules if name == module or name.startswith(module + ".")}
    found = set()
    for name in own:
        for imported in graph.find_modules_directly_imported_by(name):
            top = imported.split(".")[0]
            if imported in own or top in sys.stdlib_module_names:
                continue
            found.add(imported if top in FIRST_PARTY else top)
    return found


def allowed(imported: str, claims: list[str]) -> bool:
    for claim in claims:
        if claim.endswith(".*") and imported.startswith(claim[:-1]):
            return True
        if imported == claim or imported.startswith(claim + "."):
            return True
    return False


def named_path_problems(text: str) -> list[str]:
    return [f"named but missing: {path}" for paths, _ in package_lines(text) for path in paths
            if not (ROOT / path).exists()]


def unnamed_package_problems(text: str) -> list[str]:
    named = {path.removesuffix("/") for paths, _ in package_lines(text) for path in paths}
    packages = sorted(str(init.parent.relative_to(ROOT)) for top in ("annotator", "autolabel", "api")
                      for init in (ROOT / top).glob("*/__init__.py"))
    return [f"not on the map: {package}/" for package in packages if package not in named]


def import_problems(text: str) -> list[str]:
    problems = []
    for paths, rest in package_lines(text):
        claims = claimed_imports(rest)
        if claims is None:
            continue
        pure = "**pure**" in rest.split("Imports:")[0]
        for path in paths:
            for imported in sorted(imports_of(module_of(path))):
                first_party = imported.split(".")[0] in FIRST_PARTY
                if (first_party or pure) and not allowed(imported, claims):
                    problems.append(f"{path} imports {imported}, which its line does not say")
    return problems


def registered_tasks() -> set[str]:
    return {name for tasks in ROOT.glob("*/tasks.py") for name in TASK_NAME.findall(tasks.read_text())}


def task_problems(text: str) -> list[str]:
    listed = set(re.findall(r"`([\w.]+)`", text.split("Tasks:", 1)[1].split("\n\n", 1)[0])) if "Tasks:" in text else set()
    registered = registered_tasks()
    return ([f"listed but not registered: {name}" for name in sorted(listed - registered)]
            + [f"registered but not listed: {name}" for name in sorted(registered - listed)])


def contract_problems(text: str) -> list[str]:
    named = set(CONTRACT_CLAIM.findall(text))
    contracts = set(CONTRACT_SECTION.findall((ROOT / ".importlinter").read_text()))
    return ([f"no such contract: {name}" for name in sorted(named - contracts)]
            + [f"contract not on the map: {name}" for name in sorted(contracts - named)])


def length_problems(text: str) -> list[str]:
    problems = [f"{len(text)} characters (at most {MAX_CHARS - 1})"] if len(text) >= MAX_CHARS else []
    return problems + [f"line {number}: {len(line)} characters" for number, line in enumerate(text.splitlines(), 1)
                       if len(line) > MAX_LINE]


CHECKS = (named_path_problems, unnamed_package_problems, import_problems, task_problems, contract_problems,
          length_problems)


def test_the_map_holds_against_the_code():
    text = MAP.read_text()
    assert len(package_lines(text)) >= 30  # the lines were read
    assert registered_tasks() >= {"annotator.import_batch_run", "autolabel.run_job"}  # the tasks were found
    for check in CHECKS:
        assert check(text) == [], check.__name__


def planted(old: str, new: str) -> str:
    text = MAP.read_text()
    assert old in text, old
    return text.replace(old, new, 1)


def test_a_package_named_but_missing_fails():
    assert named_path_problems(planted("`annotator/qa/`", "`annotator/quality/`")) == [
        "named but missing: annotator/quality/"]


def test_a_package_left_off_the_map_fails():
    text = "\n".join(line for line in MAP.read_text().splitlines() if not line.startswith("- `autolabel/checks/`"))
    assert unnamed_package_problems(text) == ["not on the map: autolabel/checks/"]


def test_a_wrong_import_claim_fails():
    # A pure package said to import less than it does (first-party, then third-party).
    labelling = planted("prompt, parse, plan, vote. Imports: `annotator.domain`.", "prompt, parse, plan, vote. Imports: nothing.")
    assert any(problem.startswith("autolabel/labelling/ imports annotator.domain") for problem in import_problems(labelling))
    domain = planted("Imports: `numpy`, ", "Imports: ")
    assert "annotator/domain/ imports numpy, which its line does not say" in import_problems(domain)
    # The old map's kind of error: a package said to import only models of the app.
    faithfulness = planted("`annotator.*`, `autolabel.evaluation`, `autolabel.models`.\n- `autolabel/checks/`",
                           "`annotator.*`, `autolabel.models`.\n- `autolabel/checks/`")
    assert any(problem.startswith("autolabel/faithfulness/ imports autolabel.evaluation")
               for problem in import_problems(faithfulness))


def test_a_wrong_task_list_fails():
    assert task_problems(planted("`autolabel.train_judge`", "`autolabel.train_the_judge`")) == [
        "listed but not registered: autolabel.train_the_judge", "registered but not listed: autolabel.train_judge"]


def test_a_wrong_contract_name_fails():
    assert contract_problems(planted("contract `units-gold`", "contract `units-and-gold`")) == [
        "no such contract: units-and-gold", "contract not on the map: units-gold"]


def test_a_page_too_long_or_a_line_too_wide_fails():
    text = MAP.read_text()
    longer = text + ("x" * 99 + "\n") * (MAX_CHARS // 100)
    assert length_problems(longer) == [f"{len(longer)} characters (at most {MAX_CHARS - 1})"]
    assert length_problems("short\n" + "y" * (MAX_LINE + 1)) == [f"line 2: {MAX_LINE + 1} characters"]


def section_pointers(texts: dict[str, str]) -> list[tuple[str, str, str]]:
    """(file pointing, doc pointed to, section name) for every pointer to a section of the two docs by name."""
    return [(name, f"docs/{match[1]}.md", " ".join(match[2].split()))
            for name, text in texts.items() for match in SECTION_POINTER.finditer(text)]


def headings(text: str) -> list[str]:
    return [" ".join(heading.split()) for heading in re.findall(r"^#+ (.*)$", text, re.MULTILINE)]


def pointer_problems(texts: dict[str, str], docs: dict[str, str]) -> list[str]:
    return [f"{source} points to {doc}, \"{section}\", which has no such section"
            for source, doc, section in section_pointers(texts)
            if not any(heading.startswith(section) for heading in headings(docs[doc]))]


def tracked_texts() -> dict[str, str]:
    names = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout.decode()
    texts = {}
    for name in names.split("\0"):
        if name.endswith((".py", ".md", ".html", ".js", ".txt")) or name == "Makefile":
            try:
                texts[name] = (ROOT / name).read_text()
            except (FileNotFoundError, UnicodeDecodeError):
                continue
    return texts


def the_docs() -> dict[str, str]:
    return {f"docs/{name}.md": (ROOT / "docs" / f"{name}.md").read_text() for name in ("benchmarks", "autolabel")}


def test_every_section_the_repository_points_to_exists():
    texts = tracked_texts()
    pointed = {(doc, section) for _, doc, section in section_pointers(texts)}
    assert ("docs/benchmarks.md", "Test suite") in pointed and ("docs/autolabel.md", "Definitions") in pointed
    assert pointer_problems(texts, the_docs()) == []


def test_a_pointer_to_a_missing_section_fails():
    doc = "docs/" + "benchmarks.md"  # spelled from parts, so that this file points nowhere itself
    texts = {"annotator/x.py": f'# measured ({doc}, "A section nobody wrote"); see docs/autolabel.md, *Prompting*.'}
    assert pointer_problems(texts, the_docs()) == [
        f'annotator/x.py points to {doc}, "A section nobody wrote", which has no such section']


def test_the_benchmarks_keep_to_the_current_figures():
    assert len((ROOT / "docs" / "benchmarks.md").read_text()) < BENCHMARKS_MAX_CHARS
