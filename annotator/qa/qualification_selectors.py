"""Reads of the qualification pages: the set's gold with the leads' reasons, who waits for a retry."""

from __future__ import annotations

from ..access import blind_turn_ids
from ..models import GoldLabel, Sentence
from .qualification import qualification_turns


def qualification_gold_sentences(project, viewer) -> list[tuple]:
    """[(turn, [sentence with its gold]), ...] for the project's qualification set, in the order it is taken;
    not the turns ``viewer`` holds an unsubmitted slot on (blind there)."""
    turns = list(qualification_turns(project).exclude(pk__in=blind_turn_ids(viewer, project)).select_related("dialogue"))
    sentences: dict[int, list[Sentence]] = {turn.pk: [] for turn in turns}
    for sentence in (
        Sentence.objects.filter(turn__in=turns, gold__isnull=False).select_related("gold").order_by("turn_id", "index")
    ):
        sentences[sentence.turn_id].append(sentence)
    return [(turn, sentences[turn.pk]) for turn in turns]


def details_with_current_reasons(details) -> list:
    """A scored attempt's stored details, each with its gold's reason as it is now (a lead may have written it
    after the attempt was scored); a row whose sentence lost its gold keeps the reason stored with it."""
    def scored(row):
        return isinstance(row, dict) and isinstance(row.get("sentence"), int)

    current = dict(GoldLabel.objects.filter(sentence_id__in=[row["sentence"] for row in details if scored(row)])
                   .values_list("sentence_id", "reason"))
    return [
        {**row, "gold_reason": current.get(row["sentence"], row.get("gold_reason", ""))} if scored(row) else row
        for row in details
    ]


def waiting_for_a_lead(results) -> list:
    """The latest attempts that failed with no retry open: their annotators wait for a lead.

    ``results``: ``qa.selectors.qualification_results`` (each annotator's attempts, latest first).
    """
    return [attempts[0] for _, attempts in results if not attempts[0].passed and not attempts[0].retry_allowed]
