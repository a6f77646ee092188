"""Triplets an LLM extracted from a turn (an extraction job of ``autolabel``), stored once per job and turn."""

from __future__ import annotations

from django.db import transaction

from ..domain import claims
from ..domain.vocabulary import TripletSource
from ..models import ClaimTriplet, Sentence, Turn
from .services import claims_rule, triplet_next_index


@transaction.atomic
def triplets_add_extracted(turn_id: int, triplets, *, job_id: int, model: str) -> int:
    """Store the triplets an LLM extracted from one turn, after the turn's others; once per job and turn.

    ``triplets`` are (sentence index or None, head, relation, tail). A turn that
    already holds triplets from this job is left alone (a resumed or replayed
    job writes nothing twice). Returns how many were stored.
    """
    Turn.objects.select_for_update().filter(pk=turn_id).first()
    if ClaimTriplet.objects.filter(turn_id=turn_id, source=TripletSource.LLM, metadata__job=job_id).exists():
        return 0
    sentence_ids = dict(Sentence.objects.filter(turn_id=turn_id).values_list("index", "pk"))
    start = triplet_next_index(turn_id)
    rows = []
    for offset, (sentence_index, head, relation, tail) in enumerate(triplets):
        head, relation, tail = claims_rule(claims.clean_triplet, head, relation, tail)
        rows.append(ClaimTriplet(
            turn_id=turn_id, sentence_id=sentence_ids.get(sentence_index), index=start + offset,
            head=head, relation=relation, tail=tail, source=TripletSource.LLM,
            metadata={"job": job_id, "model": model},
        ))
    ClaimTriplet.objects.bulk_create(rows)
    return len(rows)
