"""What the learned judge reads of a sentence (no database, no model).

A ``Example`` is one sentence with what surrounds it: its turn's reference and question, its position among the
turn's sentences and, when a finished pre-labelling job predicted it, that job's sample votes. ``dense_names`` names
the numbers a linear model weighs beside the sentences' own n-grams (``dense.dense_matrix`` computes them):

- overlap with the reference: the share of the sentence's words (characters where the script is written without
  spaces), content words, word pairs and triples found in the reference, the best share of its content words
  found in one reference sentence, and the share found in the question;
- what the reference does not hold: numbers, capitalised names and dates (years, months) of the sentence absent
  from it (counts and shares), the content words absent from it;
- negation (the sentence's, and whether the reference has one), hedges and reasoning cues; evaluative words, words
  of the first and second person, and whether it ends in an exclamation or a question (``CUES``: computed, but a
  model reads them only with ``use_cues``, which cross-validation on the CogniBench sample did not support);
- the position (first, last, relative) and the length;
- the pre-label job's votes: the share of samples that gave each label of the protocol, and that said hallucinated;
- then (``STEMMED``, read only with ``use_stems``): the share of its content words whose stem (first 5 characters)
  is a stem of the reference, and its content words found in the reference per word of the sentence;
- last (``ALIGNED``, read only with ``use_alignment``): the sentence against its best-matching reference sentence
  (Jaccard, the lead over the second best, numbers and content words that sentence lacks).

Tokens are lower-cased words in spaced scripts and single characters in Chinese and Japanese
(``annotator.domain.languages``), so every language is read, not only English. ``dense.dense_matrix`` reads a
batch as arrays: each distinct reference once, every membership test a sorted search over hashed (reference,
token) keys, so predicting a job's sentences costs no Python loop per sentence or word.

``FEATURE_VERSION`` names what these features are: a model fitted on other features is refused
(``store.judge_refusal``), never fed columns it did not learn.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from annotator.domain.languages import UNSPACED_RANGES, is_unspaced

# 2: features read as arrays, hashed n-grams (dates are absent when no token of the reference is the same; word
# pairs and triples within a sentence), the cues; 1 (unrecorded): scikit-learn's vectorizers, a loop per sentence.
FEATURE_VERSION = 2

_TOKEN = re.compile(r"\w+", re.UNICODE)
UNSPACED_CLASS = "".join(f"{chr(low)}-{chr(high)}" for low, high in UNSPACED_RANGES)
_ANY_UNSPACED = re.compile(f"[{UNSPACED_CLASS}]")
MONTHS = ("january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
           "november", "december")
NEGATIONS = frozenset("not no never none nor neither without cannot isn't aren't wasn't weren't doesn't don't "
                       "didn't won't can't nothing nobody 不 没 無 无 非 未 ない nicht kein keine pas jamais".split())
HEDGES = frozenset("may might could can possibly perhaps likely unlikely probably suggest suggests suggesting "
                    "seem seems appear appears potentially generally often typically usually some".split())
REASONING = frozenset("because therefore thus hence so consequently since overall however important "
                       "significant crucial essential key should must recommend recommended consider helps help "
                       "allows ensure ensures contribute contributes impact role making makes".split())
# Cues of a judgement rather than a fact (cognitive labels: speculation, evaluation, advice), and of talk to the
# reader (greetings, offers: irrelevant sentences).
EVALUATIVE = frozenset("best great excellent ideal perfect amazing wonderful fascinating interesting remarkable "
                       "popular beautiful unique valuable beneficial effective useful worth enjoy enjoyable "
                       "impressive notable famous renowned iconic rich vibrant ultimately overall truly".split())
PERSONAL = frozenset("i me my we us our you your yours".split())
CUES = ("evaluative", "personal", "exclamation_or_question")
# Read by a model only with ``use_stems`` (on the CogniBench sample they cost 0.04 of macro F1). They are the last
# columns, after the votes: a model fitted before they existed selects the same columns by index, so version 2 holds.
STEMMED = ("stem_content_overlap", "content_found_per_word")
# Read by a model only with ``use_alignment``: the sentence against the one reference sentence that shares most of
# its content words (the reference split at . ! ? and line ends): its Jaccard overlap with that sentence, how far
# that sentence leads the second best (share of the sentence's content words), the share of its numbers absent
# from that sentence, and its content words that sentence lacks. Last, after ``STEMMED``, for the same reason.
ALIGNED = ("aligned_jaccard", "aligned_gap", "aligned_numbers_absent_share", "aligned_content_absent")
STOP = frozenset("the a an of in on at to and or is are was were be been it its this that these those for with by "
                  "as from which who their there they he she his her we you your i".split())


@dataclass(frozen=True)
class Example:
    """One sentence to judge with its context. ``votes``: the pre-label job's sample votes ([] when none)."""

    text: str
    reference: str
    question: str = ""
    position: int = 0  # 0-based index among the turn's sentences
    sentences: int = 1  # how many sentences the turn has
    votes: Sequence[dict] = field(default_factory=tuple)


def tokens(text: str) -> list[str]:
    """Lower-cased words; each character of a script written without spaces is a token of its own."""
    words = _TOKEN.findall(text.lower())
    if not _ANY_UNSPACED.search(text):  # the common case, one scan of the text
        return words
    found = []
    for word in words:
        if not _ANY_UNSPACED.search(word):
            found.append(word)
            continue
        run = ""  # a spaced run inside the word ("iphone" in "用iphone拍照") stays one token
        for character in word:
            if is_unspaced(character):
                found.extend([run, character] if run else [character])
                run = ""
            else:
                run += character
        if run:
            found.append(run)
    return found


def dense_names(labels: Sequence[str]) -> list[str]:
    """The names of ``dense_matrix``' columns, in order (the votes' columns follow the protocol's labels)."""
    return [
        "word_overlap", "content_overlap", "pair_overlap", "triple_overlap", "best_sentence_overlap",
        "question_overlap", "words_not_in_reference",
        "numbers", "numbers_absent", "numbers_absent_share", "names", "names_absent", "names_absent_share",
        "dates_absent", "negation", "reference_negation", "negation_mismatch", "hedges", "reasoning_cues",
        *CUES, "first", "last", "relative_position", "log_words", "has_votes", "votes_hallucinated",
    ] + [f"votes_{label}" for label in labels] + list(STEMMED) + list(ALIGNED)
