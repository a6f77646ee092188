"""What the benchmarks read from the pages they fetch as a browser would: one copy of each pattern.

The annotation screen's sentences and version, the sign-in form's CSRF token, and the screen's URL in the
answers of Start (Location) and Submit (HX-Redirect). bench/sync_ab.py, bench/flow_instructions.py,
bench/protocol_ab.py and bench/load_annotators.py all read pages through these.
"""

from __future__ import annotations

import re

VERSION_RE = re.compile(r'id="decision-panel"[^>]*?data-version="(\d+)"', re.S)
SENTENCE_LINK_RE = re.compile(r'<a[^>]*class="sentence[^"]*"[^>]*data-sentence="(\d+)"|'
                              r'<a[^>]*data-sentence="(\d+)"[^>]*class="sentence')
CSRF_INPUT_RE = re.compile(r'name="csrfmiddlewaretoken" value="([^"]+)"')
SCREEN_URL_RE = re.compile(r".*/a/(\d+)/$")  # an annotation screen's URL (Start's and Submit's answers)


def screen_sentences(page: str) -> list[int]:
    """The ids of the screen's sentences, in the order the screen lists them (each sentence once)."""
    return list(dict.fromkeys(int(a or b) for a, b in SENTENCE_LINK_RE.findall(page)))


def screen_version(page: str) -> int:
    """The assignment's version the screen was drawn at (what the page's first save carries)."""
    return int(VERSION_RE.search(page).group(1))


def csrf_token(page: str) -> str:
    """The CSRF token of the page's form (the sign-in page's)."""
    return CSRF_INPUT_RE.search(page).group(1)
