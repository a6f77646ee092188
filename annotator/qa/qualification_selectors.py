"""Reads of the qualification pages: the set's gold with the leads' reasons, who waits for a retry."""

from __future__ import annotations

from ..models import GoldLabel, Sentence
from .qualification import qualification_turns


def qualification_gold_sentences(project) -> list[tuple]:
    """[(turn, [sentence with its gold]), ...] for the project's qualification set, in the order it is taken."""
    turns = list(qualification_turns(project).select_related("dialogue"))
    sentences: dict[int, list[Sentence]] = {turn.pk: [] for turn in turns}
    for sentence in (
        Sentence.objects.filter(turn__in=turns, gold__isnull=False).select_related("gold").order_by("turn_id", "index")
    ):
        sentences[sentence.turn_id].append(sentence)
    return [(turn, sentences[turn.pk]) for turn in turns]


def gold_reasons(sentence_ids) -> dict[int, str]:
    """The current reason of each sentence's gold (a lead may have written it after the attempt was scored)."""
    return dict(GoldLabel.objects.filter(sentence_id__in=list(sentence_ids)).values_list("sentence_id", "reason"))


def waiting_for_a_lead(results) -> list:
    """The latest attempts that failed with no retry open: their annotators wait for a lead.

    ``results``: ``qa.selectors.qualification_results`` (each annotator's attempts, latest first).
    """
    return [attempts[0] for _, attempts in results if not attempts[0].passed and not attempts[0].retry_allowed]
