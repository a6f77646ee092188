"""Run every benchmark in bench/ one after the other (`make bench`), or the ones named.

    .venv/bin/python bench/run_all.py                 # all of them (the auto-label one alone takes ~25 min)
    .venv/bin/python bench/run_all.py agreement qa    # only these

Each script prints its own figures; docs/benchmarks.md records them with the machine's load.
"""

import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
NOT_BENCHMARKS = {"__init__", "run_all", "synthetic"}


def main(names):
    scripts = sorted(p for p in HERE.glob("*.py") if p.stem not in NOT_BENCHMARKS and not p.stem.startswith("_"))
    if names:
        unknown = set(names) - {p.stem for p in scripts}
        if unknown:
            sys.exit(f"unknown benchmark(s): {', '.join(sorted(unknown))}; known: {', '.join(p.stem for p in scripts)}")
        scripts = [p for p in scripts if p.stem in names]
    failed = []
    for script in scripts:
        print(f"\n=== {script.stem} ===", flush=True)
        started = time.monotonic()
        result = subprocess.run([sys.executable, str(script)], cwd=HERE.parent)
        print(f"=== {script.stem}: exit {result.returncode} after {time.monotonic() - started:.0f} s", flush=True)
        if result.returncode:
            failed.append(script.stem)
    if failed:
        sys.exit(f"failed: {', '.join(failed)}")


if __name__ == "__main__":
    main(sys.argv[1:])
