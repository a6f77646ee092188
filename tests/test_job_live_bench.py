"""bench/job_live.py runs end to end on a tiny job (the figures in docs/benchmarks.md come from it)."""

import re
import subprocess
import sys

from tests.conftest import ROOT


def test_the_job_page_poll_benchmark_times_both_cases(tmp_path):
    result = subprocess.run(
        [sys.executable, "bench/job_live.py", "--database-url", f"sqlite:///{tmp_path / 'bench.sqlite3'}",
         "--turns", "30", "--repeat", "2"],
        cwd=ROOT, capture_output=True, text=True, timeout=300,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert "150 predictions; 2 polls per case" in result.stdout
    sizes = dict(re.findall(r"^(nothing new|new predictions[^:]*): median .* per poll, ([\d,]+) bytes$",
                            result.stdout, re.M))
    # The poll with something new carries the turns; the one with nothing new does not.
    assert int(sizes["new predictions (the last 20 turns sent)"].replace(",", "")) > 4 * int(
        sizes["nothing new"].replace(",", ""))
