"""The architecture's import rules hold, checked by import-linter (contracts in .importlinter).

`make test` runs `lint-imports` before pytest; this runs it again so that the suite itself fails on a
violation, and shows on a copy of the code with planted violations that each contract can fail. Beyond the
contracts, no module of the project imports itself back through others (a cycle), read from the same graph.
Pure: the code is read, not imported; no database.
"""

import shutil
import subprocess
import sys
from pathlib import Path

import grimp

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("annotator", "autolabel", "api", "config")

# One planted import per contract: (file, line appended, the broken contract's name starts with).
PLANTS = [
    ("annotator/claims/services.py", "from annotator.work import views as planted", "A feature never imports another feature's views"),
    ("annotator/access.py", "from annotator.gold import services as planted", "Layers:"),
    ("annotator/work/services.py", "from autolabel.jobs import services as planted", "The annotation core never imports the pre-labeler"),
    ("annotator/domain/agreement.py", "from django.db import connection as planted", "The rules (annotator/domain) import no database"),
    ("autolabel/labelling/voting.py", "from autolabel.models import Prediction as planted", "The labelling rules of the pre-labeler"),
    ("annotator/work/write.py", "from annotator.claims import services as planted", "Where work, claims and qa lean on each other"),
    ("annotator/corpus/models.py", "from annotator.gold import services as planted", "A turn's units over gold over the corpus' models"),
    ("autolabel/learned/model.py", "from django.db import connection as planted", "The learned judge's features, model and measures are pure"),
    ("autolabel/learned/training.py", "from autolabel.jobs import services as planted", "The learned judge is a library of the jobs"),
    # The two cycles once there: a job's estimate and its creation; one sentence's features and the batch's arrays.
    ("autolabel/jobs/estimation.py", "from autolabel.jobs import services as planted", "Within each package of the pre-labeler"),
    ("autolabel/learned/features.py", "from autolabel.learned import dense as planted", "Within each package of the pre-labeler"),
]


def lint_imports(folder: Path) -> subprocess.CompletedProcess:
    """`lint-imports` on the code in ``folder`` (its own .importlinter, its own packages first on the path)."""
    return subprocess.run(
        [sys.executable, "-c", "import sys; from importlinter.cli import lint_imports_command; "
                               "sys.argv = ['lint-imports', '--no-cache']; lint_imports_command()"],
        cwd=folder, env={"PYTHONPATH": str(folder), "PATH": "/usr/bin:/bin"},
        capture_output=True, text=True, timeout=300,
    )


def test_the_code_keeps_every_import_contract():
    result = lint_imports(ROOT)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "Contracts: 10 kept, 0 broken." in result.stdout  # every contract of .importlinter was read and checked


def test_a_planted_violation_of_each_contract_fails_the_check(tmp_path):
    for package in PACKAGES:
        shutil.copytree(ROOT / package, tmp_path / package,
                        ignore=shutil.ignore_patterns("__pycache__", "migrations", "*.html", "*.json"))
    shutil.copy(ROOT / ".importlinter", tmp_path / ".importlinter")
    assert lint_imports(tmp_path).returncode == 0  # the copy is clean before anything is planted

    for relative, line, _ in PLANTS:
        path = tmp_path / relative
        path.write_text(path.read_text() + f"\n{line}  # planted\n")
    result = lint_imports(tmp_path)

    assert result.returncode == 1, result.stdout
    broken = result.stdout.split("Broken contracts")[1]
    for relative, _, contract in PLANTS:
        assert contract in broken, (contract, result.stdout)
        assert _named(relative[:-3].replace("/", "."), broken), (relative, result.stdout)


def _named(module: str, broken: str) -> bool:
    """Whether the report of broken contracts names ``module``: whole, or (a cycle) as a leaf of its package."""
    package, _, leaf = module.rpartition(".")
    return module in broken or (f"No cycles are allowed in {package}." in broken and f".{leaf} " in broken)


def module_cycles(graph: grimp.ImportGraph) -> set[tuple[str, ...]]:
    """Every cycle of imports between modules, each as its modules from the first by name (a module importing
    ``x`` while ``x`` reaches it back)."""
    cycles = set()
    for module in graph.modules:
        for imported in graph.find_modules_directly_imported_by(module):
            chain = graph.find_shortest_chain(importer=imported, imported=module) if imported != module else None
            if chain:
                loop = [module, *chain[:-1]]
                first = loop.index(min(loop))
                cycles.add(tuple(loop[first:] + loop[:first]))
    return cycles


def test_no_module_imports_itself_back():
    # The models of the features name one another by string ("annotator.Turn"), never by import.
    assert module_cycles(grimp.build_graph(*PACKAGES, cache_dir=None)) == set()


def test_a_cycle_through_other_modules_is_found():
    graph = grimp.ImportGraph()
    for importer, imported in [("jobs.services", "jobs.estimation"), ("jobs.estimation", "jobs.selectors"),
                               ("jobs.selectors", "jobs.services"), ("jobs.views", "jobs.services")]:
        graph.add_import(importer=importer, imported=imported)
    assert module_cycles(graph) == {("jobs.estimation", "jobs.selectors", "jobs.services")}
    graph.remove_import(importer="jobs.selectors", imported="jobs.services")
    assert module_cycles(graph) == set()
