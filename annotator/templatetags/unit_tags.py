"""Template helpers of the unit features: the annotation screen's flag dialog, the lead's units section of the
turn page, the project page's link to the flagged turns."""

from django import template

from ..access import is_lead
from annotator.corpus.units import selectors
from ..domain.units import word_gaps
from ..domain.vocabulary import UnitFlagKind

register = template.Library()


@register.inclusion_tag("units/partials/flag_dialog.html", takes_context=True)
def unit_flag_dialog(context, assignment):
    """The flag dialog of the annotation screen, with the annotator's own flags (never anyone else's)."""
    from ..work.own_marks import own_marks

    request = context["request"]
    flags = selectors.own_flags(request.user, assignment.turn) if own_marks(request, assignment.turn).flags else {}
    return {"assignment": assignment, "kinds": UnitFlagKind.choices, "csrf_token": context.get("csrf_token"),
            "flags": {str(k): v for k, v in flags.items()}}


def _pieces(text: str) -> list[tuple[str, int | None]]:
    """The unit's text as (words, None) and (gap, offset) pieces: each gap is a split point the lead can click."""
    pieces, cursor = [], 0
    for start, end in word_gaps(text):
        pieces.append((text[cursor:start], None))
        pieces.append((text[start:end], start))
        cursor = end
    pieces.append((text[cursor:], None))
    return pieces


@register.inclusion_tag("units/partials/turn_units.html", takes_context=True)
def turn_units_section(context, project, turn, sentences):
    """The lead's units section of the turn page: each unit's open flags, split and merge, the audit."""
    flags = selectors.open_flags_by_unit(turn)
    rows = [{"unit": unit, "flags": flags.get(unit.pk, []), "pieces": _pieces(unit.text),
             "last": position == len(sentences) - 1} for position, unit in enumerate(sentences)]
    return {"project": project, "turn": turn, "rows": rows, "csrf_token": context.get("csrf_token"),
            "open_count": sum(len(found) for found in flags.values()), "changes": selectors.segmentation_changes(turn),
            "closed_flags": selectors.closed_flags(turn), "request": context["request"]}


@register.simple_tag(takes_context=True)
def open_unit_flag_count(context, project):
    user = context["request"].user
    return selectors.open_flag_count(user, project) if is_lead(user, project) else 0
