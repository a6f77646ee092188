"""gunicorn settings of bench/web_memory.py: after each request the worker writes its RSS and the heavy libraries
it has imported to the file ``WEB_MEMORY_REPORT`` names."""

import json
import os
import sys

HEAVY = ("numpy", "scipy", "sklearn", "nltk", "krippendorff")


def post_request(worker, req, environ, resp):
    status = dict(line.split(":", 1) for line in open("/proc/self/status") if ":" in line)
    report = {"rss_kib": int(status["VmRSS"].split()[0]), "peak_kib": int(status["VmHWM"].split()[0]),
              "heavy": [name for name in HEAVY if name in sys.modules]}
    with open(os.environ["WEB_MEMORY_REPORT"], "w") as handle:
        json.dump(report, handle)
