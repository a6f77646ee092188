"""A YAML alias bomb given to ``protocol_set``: seconds, peak memory and the size of the refusal (issue 38, item 1).

    .venv/bin/python bench/protocol_bomb.py [--levels 6] [--root PATH]

Runs, in a fresh process, what ``manage.py protocol_set`` does with a file before it touches the database: the
command's own ``read_json`` (the file read as YAML), then ``load_protocol`` on the document, and writes the
lines the command would print (its error, or one ``path: message`` per problem). ``--root`` runs another
checkout's code the same way (the code before the fix: ``git archive f01eb48 | tar -x -C /tmp/before``, then
``--root /tmp/before``). The bomb: ``--levels`` lines of nine aliases each, the last one used as the name, the
steps and the labels (6 levels: 9**6 = 531,441 strings in each, ~300 bytes of YAML).

Prints one JSON object (docs/benchmarks.md keeps the figures).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def alias_bomb(levels: int) -> str:
    names = "abcdefghijklmnop"
    lines = [f"a: &a [{','.join('x' * 9)}]"]
    for n in range(1, levels):
        lines.append(f"{names[n]}: &{names[n]} [{','.join([f'*{names[n - 1]}'] * 9)}]")
    top = names[levels - 1]
    lines += ["id: bomb", "version: 1", f"name: *{top}", "start: x", f"steps: *{top}", f"labels: *{top}"]
    return "\n".join(lines) + "\n"


def child(path: str) -> dict:
    import django

    django.setup()
    from django.core.management.base import CommandError

    from annotator.domain.protocol.document import ProtocolDocumentError, load_protocol
    from annotator.management.commands.protocol_set import read_json

    started = time.perf_counter()
    try:
        document = read_json(path, "protocol document")
        load_protocol(document)
        said = "accepted"
    except CommandError as error:
        said = f"CommandError: {error}"
    except ProtocolDocumentError as refused:
        said = "\n".join(f"{where}: {message}" for where, message in refused.problems)
    seconds = time.perf_counter() - started
    return {"seconds": round(seconds, 2), "output_bytes": len(said.encode()),
            "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
            "first_line": said.splitlines()[0][:200] if said else ""}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--levels", type=int, default=6)
    parser.add_argument("--root", default=str(ROOT), help="the checkout whose code runs")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    options = parser.parse_args()
    if options.child:
        print(json.dumps(child(options.child)))
        return
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "bomb.yaml"
        path.write_text(alias_bomb(options.levels))
        environment = {**os.environ, "DJANGO_SETTINGS_MODULE": "config.settings.development",
                       "PYTHONPATH": options.root, "PYTHONDONTWRITEBYTECODE": "1"}
        done = subprocess.run([sys.executable, str(Path(__file__).resolve()), "--child", str(path)], cwd=options.root,
                              env=environment, capture_output=True, text=True, check=True)
        result = json.loads(done.stdout.strip().splitlines()[-1])
    print(json.dumps({"root": options.root, "levels": options.levels, "input_bytes": len(alias_bomb(options.levels)),
                      **result}, indent=1))


if __name__ == "__main__":
    main()
