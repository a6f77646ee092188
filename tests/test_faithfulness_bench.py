"""bench/faithfulness.py runs end to end on a tiny project (the figures in docs/benchmarks.md come from it)."""

import re
import subprocess
import sys

from tests.conftest import ROOT


def test_the_faithfulness_benchmark_builds_its_project_and_reports_each_job(tmp_path):
    result = subprocess.run(
        [sys.executable, "bench/faithfulness.py", "--database-url", f"sqlite:///{tmp_path / 'bench.sqlite3'}",
         "--turns", "96", "--repeat", "1"],
        cwd=ROOT, capture_output=True, text=True, timeout=300,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    timed = re.findall(r"^\s+(\d+) turns: report median [\d.]+ s .* (\d+) calibration turns$", result.stdout, re.M)
    # Three jobs (a quarter, half and all of the turns), each corrected by the gold of its own random draw.
    assert timed == [("24", "2"), ("48", "2"), ("96", "4")]
    assert result.stdout.count("drawn at random for this job correct the estimates") == 3
    assert "were not drawn at random" in result.stdout
