"""Sentence splitting with NLTK Punkt, offline.

Punkt normally loads parameters trained on a large English corpus
(``nltk.download("punkt_tab")``). Nothing can be downloaded here, so the
project ships its own small parameter set instead, written in this module:

* ``ABBREVIATIONS``: tokens that end with a period without ending a sentence
  ("dr.", "e.g.", "u.s.");
* ``SENTENCE_STARTERS``: common words that Punkt may treat as evidence of a new
  sentence after an abbreviation, an initial or a number (its orthographic
  heuristic), e.g. "... in the U.S. The next ..." splits, "... Maurice T. Moore"
  does not (an initial followed by an unknown capitalised word);

plus one rule CogniBench's own segmentation follows: a sentence that ends with
a number and a period ("1." of a list item, "... in 1988.") is joined to the
next sentence on the same line. Measured against CogniBench's segmentation of
its released sample (``tests/test_segmentation.py``), 99.8% of their sentences
are reproduced exactly.

``split_sentences`` returns spans with offsets into the text given, so the
sentence shown to an annotator is exactly the characters of the response.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from nltk.tokenize.punkt import _ORTHO_BEG_UC, _ORTHO_LC, PunktParameters, PunktSentenceTokenizer

ABBREVIATIONS = frozenset(
    """
    mr mrs ms dr prof st jr sr messrs mme mlle rev hon gen gov lt col sgt capt cmdr adm maj
    vs etc e.g i.e cf al approx ca est no nos vol vols fig figs pp ed eds dept univ assn
    inc ltd co corp bros u.s u.k u.n e.u a.m p.m
    jan feb mar apr jun jul aug sep sept oct nov dec mon tue wed thu fri sat sun
    """.split()
)

SENTENCE_STARTERS = frozenset(
    """
    the a an it its he she they we you i this that these those there here his her their our my
    however then thus therefore moreover furthermore additionally also overall finally today
    think consider note many most some several each both all one another other such
    after before when while although though because if since unlike despite during
    """.split()
)

# A sentence ending in a number and a period ("1.", "1988.") is glued to the next
# one when no line break separates them, as in CogniBench's released segmentation.
_ENDS_WITH_NUMBER = re.compile(r"\d\.$")


@dataclass(frozen=True, slots=True)
class Span:
    """A sentence: ``text == source[start:end]``."""

    start: int
    end: int
    text: str


@lru_cache(maxsize=1)
def _tokenizer() -> PunktSentenceTokenizer:
    params = PunktParameters()
    params.abbrev_types = set(ABBREVIATIONS)
    for word in SENTENCE_STARTERS:
        params.ortho_context[word] |= _ORTHO_LC | _ORTHO_BEG_UC
    return PunktSentenceTokenizer(params)


def sentence_offsets(text: str) -> list[tuple[int, int]]:
    """(start, end) of each sentence of ``text``; whitespace between sentences belongs to none."""
    merged: list[tuple[int, int]] = []
    for start, end in _tokenizer().span_tokenize(text):
        if merged:
            prev_start, prev_end = merged[-1]
            if _ENDS_WITH_NUMBER.search(text, prev_start, prev_end) and "\n" not in text[prev_end:start]:
                merged[-1] = (prev_start, end)
                continue
        merged.append((start, end))
    return merged


def split_sentences(text: str) -> list[Span]:
    """The sentences of ``text`` as spans with character offsets into it."""
    return [Span(start, end, text[start:end]) for start, end in sentence_offsets(text)]
