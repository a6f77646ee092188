"""The job page's live feed: the turns labelled last, newest first, while a job runs.

The job page polls its progress every second; each answer carries the feed only when a prediction newer
than the page's cursor (the id of the newest prediction it shows) was stored, and then only the latest
``LIVE_TURNS`` turns, so a 10,000-turn job does not resend what the page already has. The runners store a
turn's predictions together in one flush (``progress.flush``), and one worker at a time holds a job's
lease, so prediction ids grow with time and a turn's predictions arrive whole.
"""

from __future__ import annotations

from dataclasses import dataclass

from annotator.models import Sentence

from autolabel.models import AutoLabelJob, Prediction

LIVE_TURNS = 20
SCAN_CHUNK = 500  # predictions read per step, newest first, to find the latest turns


@dataclass
class LiveTurn:
    turn: object
    predictions: list[Prediction]

    @property
    def label_counts(self) -> list[tuple[str, str, int]]:
        """(label, label or "no label", sentences) of the turn's predicted labels, most frequent first."""
        counts: dict[str, list] = {}
        for prediction in self.predictions:
            key = prediction.label or ""
            name = prediction.label or "no label"  # the page shows the name from the job's protocol
            counts.setdefault(key, [key, name, 0])[2] += 1
        return sorted((tuple(row) for row in counts.values()), key=lambda row: (-row[2], row[1]))


@dataclass
class LiveFeed:
    turns: list[LiveTurn]
    cursor: int  # the newest prediction id the feed shows (0: none yet)


def _visible(job: AutoLabelJob, hidden_turn_ids):
    return Prediction.objects.filter(job=job).exclude(sentence__turn_id__in=hidden_turn_ids)


def newest_prediction_id(job: AutoLabelJob, hidden_turn_ids) -> int:
    return _visible(job, hidden_turn_ids).order_by("-pk").values_list("pk", flat=True).first() or 0


def _latest_turn_ids(job: AutoLabelJob, hidden_turn_ids, limit: int) -> list[int]:
    """The ids of the ``limit`` turns whose predictions were stored last, newest first."""
    turn_ids: list[int] = []
    before = None
    while len(turn_ids) < limit:
        rows = _visible(job, hidden_turn_ids)
        if before is not None:
            rows = rows.filter(pk__lt=before)
        chunk = list(rows.order_by("-pk").values_list("pk", "sentence__turn_id")[:SCAN_CHUNK])
        if not chunk:
            break
        for _, turn_id in chunk:
            if turn_id not in turn_ids:
                turn_ids.append(turn_id)
        before = chunk[-1][0]
    return turn_ids[:limit]


def live_feed(job: AutoLabelJob, hidden_turn_ids, after: int = 0, limit: int = LIVE_TURNS) -> LiveFeed | None:
    """The latest turns with their predictions, or None when nothing newer than ``after`` was stored.

    ``hidden_turn_ids``: turns whose pre-labels the viewer may not see (``access.blind_turn_ids``).
    """
    cursor = newest_prediction_id(job, hidden_turn_ids)
    if cursor <= after:
        return None
    turn_ids = _latest_turn_ids(job, hidden_turn_ids, limit)
    by_turn: dict[int, list[Prediction]] = {turn_id: [] for turn_id in turn_ids}
    # By sentence ids, so that the (job, sentence) index finds the rows (by turn id, every prediction is read).
    sentence_ids = Sentence.objects.filter(turn_id__in=turn_ids).values("pk")
    for prediction in (
        _visible(job, hidden_turn_ids).filter(sentence_id__in=sentence_ids, pk__lte=cursor)
        .select_related("sentence__turn__dialogue").order_by("sentence__index")
    ):
        by_turn[prediction.sentence.turn_id].append(prediction)
    turns = [LiveTurn(by_turn[turn_id][0].sentence.turn, by_turn[turn_id]) for turn_id in turn_ids if by_turn[turn_id]]
    return LiveFeed(turns=turns, cursor=cursor)
