"""Sentence splitting by language: NLTK Punkt for English, sentencex for every other language.

The language (``languages.language_code``) chooses the segmenter (``segmenter_for``):

* English: NLTK Punkt with the parameters below (offline), as measured against CogniBench;
* any other language: ``sentencex`` (Wikimedia's multilingual segmenter, rules for ~300 languages,
  with fallbacks between related languages), measured on the cases of ``docs/languages.md`` against
  ``pysbd`` and chosen; its spans are then corrected by the few rules of ``_corrected``, each for a
  case it got wrong (see there).

Both return spans with Python string offsets into the text, whitespace between units belonging to
none.

English: Punkt normally loads parameters trained on a large English corpus
(``nltk.download("punkt_tab")``). Nothing can be downloaded here, so the
project ships its own small parameter set instead, written in this module:

* ``ABBREVIATIONS``: tokens that end with a period without ending a sentence
  ("dr.", "e.g.", "u.s.");
* ``SENTENCE_STARTERS``: common words that Punkt may treat as evidence of a new
  sentence after an abbreviation, an initial or a number (its orthographic
  heuristic), e.g. "... in the U.S. The next ..." splits, "... Maurice T. Moore"
  does not (an initial followed by an unknown capitalised word);

plus one rule for numbered lists: a list item's number ("1." at the start of a
line, or standing alone between two sentences) is joined to the item that
follows it on the same line. A number with a full stop that ends a sentence
("He was born in 1990. He died in 2020.") ends its unit like any other
sentence end: two claims in one unit defeat sentence-level labels.
CogniBench's released segmentation joins those too ("... from 1985 to 1988.He
worked ..."); its importer keeps its units as given, so this cut only differs
from CogniBench where the studio cuts the text itself. Measured against
CogniBench's segmentation of its released sample (``tests/test_segmentation.py``),
413 of its 424 sentences are reproduced exactly (97.4 %); each of the other 11
is two of ours, cut at a number and a full stop before a new sentence.

``split_sentences`` returns spans with offsets into the text given, so the
sentence shown to an annotator is exactly the characters of the response.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

import sys

import sentencex

from .languages import DEFAULT_LANGUAGE, language_name


def _import_punkt():
    """NLTK's Punkt, imported when English text is first cut, not when this module is: a web process that serves
    pages, and an import whose file brings its units, never cut English text, and NLTK's package costs ~25 MB and
    0.25 s to import even with SciPy and scikit-learn hidden (below).

    NLTK's package imports all of NLTK, and with it, where SciPy and scikit-learn are installed (the learned
    judge needs them), ``scipy.stats`` for a Fisher test and scikit-learn for a classifier wrapper that Punkt never
    uses: 2.9 s of CPU instead of 1.1 s in every process that cuts text (each worker, each ``manage.py``). NLTK
    imports both optionally (``try: … except ImportError``), so they are hidden while it loads — unless already
    loaded — and importable as usual afterwards."""
    hidden = [name for name in ("scipy.stats", "sklearn") if name not in sys.modules]
    sys.modules.update(dict.fromkeys(hidden))
    try:
        from nltk.tokenize import punkt
    finally:
        for name in hidden:
            if sys.modules.get(name, False) is None:
                del sys.modules[name]
    return punkt


ABBREVIATIONS = frozenset(
    """
    mr mrs ms dr prof st jr sr messrs mme mlle rev hon gen gov lt col sgt capt cmdr adm maj
    vs v etc e.g i.e cf al approx ca est no nos vol vols fig figs p pp ch ed eds dept univ assn
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

# A list item's number ("1.", "2.3.") where Punkt ends a unit: at the start of a line ("Items:\n\n1." + "Apples
# ...") or alone between two sentences ("... red." + "2." + "Pears ..."). It is glued to the item that follows on the
# same line. Any other number with a full stop ("born in 1990." + "He died ...") ends a sentence and stays cut.
_LIST_MARKER = re.compile(r"\s*\d+(?:\.\d+)*\.")


def _ends_with_list_marker(text: str, start: int, end: int) -> bool:
    """Whether the unit ``text[start:end]`` ends with a list item's number alone on its line (so far)."""
    line_start = max(start, text.rfind("\n", start, end) + 1)
    return _LIST_MARKER.fullmatch(text, line_start, end) is not None


class SegmentationError(ValueError):
    """A text the segmenter could not split."""


@dataclass(frozen=True, slots=True)
class Span:
    """A sentence: ``text == source[start:end]``."""

    start: int
    end: int
    text: str


@lru_cache(maxsize=1)
def _tokenizer():
    """Punkt with the parameters above (a ``PunktSentenceTokenizer``), made on the first English text cut."""
    punkt = _import_punkt()
    params = punkt.PunktParameters()
    params.abbrev_types = set(ABBREVIATIONS)
    for word in SENTENCE_STARTERS:
        params.ortho_context[word] |= punkt._ORTHO_LC | punkt._ORTHO_BEG_UC
    return punkt.PunktSentenceTokenizer(params)


def _punkt_offsets(text: str) -> list[tuple[int, int]]:
    """English: (start, end) of each sentence of ``text``; whitespace between sentences belongs to none."""
    merged: list[tuple[int, int]] = []
    for start, end in _tokenizer().span_tokenize(text):
        if merged:
            prev_start, prev_end = merged[-1]
            if "\n" not in text[prev_end:start] and _ends_with_list_marker(text, prev_start, prev_end):
                merged[-1] = (prev_start, end)
                continue
        merged.append((start, end))
    return merged


# Invisible spaces: "It rained.\u200bThen..." is two sentences to a reader, but neither Punkt nor sentencex
# counts U+200B (zero-width space), U+2060 (word joiner) or U+FEFF (a stray byte-order mark) as a space. The
# segmenters read a copy where each is a plain space (one character for one: the offsets stay those of the
# text), so the units' bounds leave them out as they leave whitespace out. U+200C/U+200D join or part letters
# inside Persian and Indic words and are left as they are.
_INVISIBLE_SPACES = str.maketrans({"\u200b": " ", "\u2060": " ", "\ufeff": " "})


def sentence_offsets(text: str, language: str = DEFAULT_LANGUAGE) -> list[tuple[int, int]]:
    """(start, end) of each unit of ``text`` in ``language`` (an ISO 639-1 code, ``languages.language_code``)."""
    text = text.translate(_INVISIBLE_SPACES)
    if language == "en":
        try:
            return _punkt_offsets(text)
        except TimeoutError:
            # NLTK bounds its regular expressions in time (nltk.redos); the importers bound the response's
            # length (IMPORT_MAX_RESPONSE_CHARS) well below that, this names what is left if it happens.
            raise SegmentationError(f"Punkt gave up on this text of {len(text):,} characters (too slow to split)") from None
    return _multilingual_offsets(text, language)


def split_sentences(text: str, language: str = DEFAULT_LANGUAGE) -> list[Span]:
    """The units of ``text`` as spans with character offsets into it."""
    return [Span(start, end, text[start:end]) for start, end in sentence_offsets(text, language)]


def segmenter_for(language: str) -> str:
    """The name of the segmenter used for ``language``, as the import summary gives it."""
    if language == "en":
        return "NLTK Punkt (English)"
    return f"sentencex ({language_name(language)}, {language})"


# --------------------------------------------------------------------------- other languages

# Closing quotes and brackets that sentencex sometimes leaves at the start of the next unit
# ("『吾輩は猫である。』と" gave "『吾輩は猫である。" + "』と..."): they go back to the unit they close.
# ASCII quotes and guillemets are left alone: they open as often as they close.
_CLOSERS = "」』”’）)】〉》〕〗〙〛］]｝}"
# Japanese quotative particles: "「もう帰る。」と言った。" is one sentence, not "「もう帰る。」" + "と言った。".
_JAPANESE_QUOTATIVE = ("と", "って")
# Titles before a name never end a sentence: English ones inside Chinese text ("Mr. Smith来了"),
# French (M. Dupont), Spanish (Sr., Dra.), German (Hr., Fr.). Case-sensitive: "3 m." may end a sentence.
# (Searched in the last 8 characters of a unit only: ``\b`` stands for the start of the title there.)
_TITLES = re.compile(r"(?:^|(?<![\w.]))(?:Mr|Mrs|Ms|Dr|Prof|St|Sr|Sra|Srta|Dra|M|MM|Mme|Mlle|Me|Hr|Fr)\.$")
_FULL_STOPS = ".．"
# A number cut at its decimal point: "３．" + "１４" (sentencex splits at a full-width full stop).
_DIGITS = frozenset("0123456789０１２３４５６７８９")
# Languages written without spaces between sentences: elsewhere a full stop followed by no space is
# inside a token ("av. J.-C.", "example.com"), not the end of a sentence.
UNSPACED_LANGUAGES = frozenset({"zh", "ja", "th", "lo", "km", "my", "bo", "dz"})


def _multilingual_offsets(text: str, language: str) -> list[tuple[int, int]]:
    # sentencex.segment gives the pieces of the text, in order and whole (1.8x faster than its boundaries with
    # offsets); if they ever did not make up the text, the offsets are taken from get_sentence_boundaries.
    pieces = sentencex.segment(language, text)
    if "".join(pieces) != text:
        boundaries = sentencex.get_sentence_boundaries(language, text)
        starts = [b["start_index"] for b in boundaries]
        pieces = [text[b["start_index"]:b["end_index"]] for b in boundaries]
    else:
        starts, position = [], 0
        for piece in pieces:
            starts.append(position)
            position += len(piece)
    spans = []
    for start, piece in zip(starts, pieces):
        kept = piece.strip()
        if kept:
            start += len(piece) - len(piece.lstrip())
            spans.append((start, start + len(kept)))
    return _cut_inside(text, _corrected(text, spans, language), language)


def _corrected(text: str, spans: list[tuple[int, int]], language: str) -> list[tuple[int, int]]:
    """sentencex's units with the cases it got wrong put right (each rule measured on docs/languages.md)."""
    spaced = language not in UNSPACED_LANGUAGES
    out: list[tuple[int, int]] = []
    for start, end in spans:
        if out:
            prev_start, prev_end = out[-1]
            moved = start
            while moved < end and text[moved] in _CLOSERS and prev_end == start:
                moved += 1
            if moved > start:
                prev_end = moved
                out[-1] = (prev_start, prev_end)
                start = moved
                while start < end and text[start].isspace():
                    start += 1
                if start == end:
                    continue
            last = text[prev_end - 1]
            touching = prev_end == start
            if last in _FULL_STOPS and (
                _TITLES.search(text, max(prev_start, prev_end - 8), prev_end)
                or (spaced and touching and last == ".")
                or (touching and prev_end - prev_start > 1 and text[prev_end - 2] in _DIGITS and text[start] in _DIGITS)
            ) or (spaced and last == "." and _continues_after_abbreviation(text, prev_start, prev_end, start, language)
            ) or (language == "ja" and touching and last in _CLOSERS and text.startswith(_JAPANESE_QUOTATIVE, start)):
                out[-1] = (prev_start, end)
                continue
        out.append((start, end))
    return out


# Abbreviations that stand before a number and so never end a sentence before one ("le 3 févr. 2024", "en déc.
# 1990"): the months of the languages whose dates abbreviate them with a full stop. English's are in Punkt's
# ABBREVIATIONS; a full stop followed by a lower-case word never ends a sentence in a cased script (below).
_BEFORE_NUMBERS = {
    "fr": "janv|févr|fév|avr|juil|sept|oct|nov|déc",
    "de": "Jan|Feb|Febr|Apr|Aug|Sept|Sep|Okt|Nov|Dez",
    "es": "ene|feb|abr|jun|jul|ago|sept|sep|oct|nov|dic",
    "it": "genn|febbr|apr|giu|lug|ag|sett|ott|nov|dic",
    "ru": "янв|февр|апр|авг|сент|окт|нояб|дек",
}
_BEFORE_NUMBERS_RE = {code: re.compile(r"(?<!\w)(?:%s)\.$" % words, re.IGNORECASE) for code, words in _BEFORE_NUMBERS.items()}


def _continues_after_abbreviation(text: str, prev_start: int, prev_end: int, start: int, language: str) -> bool:
    """Whether a unit that ends with a full stop goes on in the next one: the next starts with a lower-case
    letter ("т.е. опоздал", "janv. nous"), or with a number after a month's abbreviation ("févr. 2024")."""
    first = text[start]
    if first.islower():
        return True
    pattern = _BEFORE_NUMBERS_RE.get(language)
    return first in _DIGITS and pattern is not None and pattern.search(text, max(prev_start, prev_end - 8), prev_end) is not None


# Sentence ends sentencex leaves inside a unit, cut after (the unit's characters kept whole, whitespace between
# the two parts belonging to neither):
# - in Chinese and Japanese, an end mark (with the quotes it closes) right before a number: "推迟了！2024年再议。";
# - in Chinese and Japanese, an ellipsis after a clause that is complete — one that ends with a sentence-final
#   particle (Chinese 了 吧 呢 啊 吗 呀 啦 嘛 哦 呗, Japanese た だ す ね よ わ) — and before a new clause:
#   "雨停了……街上的人渐渐多了。" is two sentences, while "他说……我不知道。" (a verb waiting for what was said)
#   and "我觉得……还行吧。" (a pause inside the clause) stay one; an ellipsis before an end mark, a closing
#   quote or the end of the text never cuts;
# - in Korean, a full stop written without a space between two Hangul syllables: "수도입니다.부산은".
_END_BEFORE_NUMBER = re.compile(r"[。！？!?]+[%s]*(?=[0-9０-９])" % re.escape(_CLOSERS))
_FINAL_PARTICLES = "了吧呢啊吗呀啦嘛哦呗" + "たすだねよわ"
_ELLIPSIS_AFTER_CLAUSE = re.compile(r"(?<=[%s])(?:…+|⋯+|\.{3,})(?=[^\s…⋯.。！？!?，,、：:；;%s])"
                                    % (_FINAL_PARTICLES, re.escape(_CLOSERS)))
_HANGUL_FULL_STOP = re.compile(r"(?<=[\uac00-\ud7a3])\.(?=[\uac00-\ud7a3])")
_CUTS = {"zh": (_END_BEFORE_NUMBER, _ELLIPSIS_AFTER_CLAUSE), "ja": (_END_BEFORE_NUMBER, _ELLIPSIS_AFTER_CLAUSE),
         "ko": (_HANGUL_FULL_STOP,)}


def _cut_inside(text: str, spans: list[tuple[int, int]], language: str) -> list[tuple[int, int]]:
    patterns = _CUTS.get(language)
    if not patterns:
        return spans
    out = []
    for start, end in spans:
        cuts = sorted({match.end() for pattern in patterns for match in pattern.finditer(text, start, end)
                       if start < match.end() < end})
        for cut in [*cuts, end]:
            piece_start = start
            while piece_start < cut and text[piece_start].isspace():
                piece_start += 1
            piece_end = cut
            while piece_end > piece_start and text[piece_end - 1].isspace():
                piece_end -= 1
            if piece_end > piece_start:
                out.append((piece_start, piece_end))
            start = cut
    return out


# --------------------------------------------------------------------------- units worth a lead's look

# CogniBench's own units reach 806 characters (its released sample); a unit longer than this most likely holds
# several sentences the segmenter could not tell apart (no end mark, a list, a table), and a lead looks at it.
LONG_UNIT_CHARS = 600
# A cheap first look for an end mark with text after it; the segmenter then decides (an abbreviation is no end).
_END_MARK_THEN_TEXT = re.compile(r"[.!?。！？…।؟][\"'”’」』)\]]*\s*\S")


def unit_review_reasons(text: str, language: str = DEFAULT_LANGUAGE) -> list[str]:
    """Why a unit looks wrong, for the lead's "Review units" step: very long, or holding several sentence ends
    (the language's segmenter cuts it in more than one). Empty when it looks right."""
    reasons = []
    if len(text) > LONG_UNIT_CHARS:
        reasons.append(f"{len(text):,} characters long")
    if _END_MARK_THEN_TEXT.search(text):
        try:
            count = len(sentence_offsets(text, language))
        except SegmentationError:
            count = 1
        if count > 1:
            reasons.append(f"holds {count} sentences")
    return reasons
