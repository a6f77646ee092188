"""Display helpers for gold, adjudication and reports pages."""

import re

from django import template
from django.utils.html import format_html_join

from ..domain.colours import readable_text_colour
from ..domain.protocol.cache import ProtocolCache
from ..domain.protocol.document import default_protocol
from ..domain.protocol.groups import reading

register = template.Library()
_IDENTIFIER = re.compile(r"[a-z][a-z0-9_]*")
_COLOUR = re.compile(r"#[0-9a-fA-F]{6}")


def _protocol(protocol):
    """The protocol the filter is given: a protocol, or a project (its current protocol); else the built-in one."""
    if hasattr(protocol, "protocol_version_id"):
        from ..projects.protocols import protocol_for

        protocol = protocol_for(protocol)
    return protocol if hasattr(protocol, "checksum") else default_protocol()


def _read(protocol):
    return reading(_protocol(protocol))


@register.filter
def label_name(value, protocol=None):
    """``{{ label|label_name:protocol }}``: the label's name in the project's protocol document."""
    if not value:
        return "—"
    return _read(protocol).label_names.get(value, value)


@register.filter
def answer_name(value, protocol=None):
    """An answer's wording (``value`` is a (step, answer) pair, or an answer value looked up in any step)."""
    if value is None:
        return "—"
    read = _read(protocol)
    if isinstance(value, tuple):
        return read.answer_wording(*value)
    return next((name for (_, answer), name in read.answer_names.items() if answer == value), value)


@register.filter
def step_question(value, protocol=None):
    return _read(protocol).step_questions.get(value, value)


@register.simple_tag
def label_styles(protocol=None):
    """A ``<style>`` giving every label of the page's protocol its document colour as a chip (``chip-<id>``)."""
    protocol = _protocol(protocol)
    # Written once per protocol document (its checksum, as ``reading``): every annotation screen asks for them.
    return _STYLES.get_or_make(protocol.checksum, lambda: _styles(protocol))


def _styles(protocol) -> str:
    read = reading(protocol)
    rules = [(label, colour) for label, colour in read.label_colours.items()
             if _IDENTIFIER.fullmatch(label) and colour and _COLOUR.fullmatch(colour)]
    return format_html_join(
        "", '<style>.chip-{0}{{background:{1};color:{2}}} .chip-border-{0}{{border-left-color:{1} !important}}</style>',
        [(label, colour, readable_text_colour(colour)) for label, colour in rules]) if rules else ""


_STYLES: ProtocolCache[str] = ProtocolCache()  # bounded: every version a process saw used to stay


@register.filter
def pct(value, digits=1):
    if value is None or value == "":
        return "n/a"
    return f"{100 * float(value):.{int(digits)}f}%"


@register.filter
def num(value, digits=3):
    if value is None or value == "":
        return "n/a"
    return f"{float(value):.{int(digits)}f}"


@register.filter
def interval(bounds):
    """A 95 % interval as the reports show it, "[low, high]"; "–" where there is none (a view without gold, or a
    figure kept before its interval was)."""
    if not bounds or bounds[0] is None:
        return "–"
    return f"[{bounds[0]}, {bounds[1]}]"


@register.filter
def index(sequence, position):
    try:
        return sequence[position]
    except (IndexError, KeyError, TypeError):
        return None


@register.simple_tag(takes_context=True)
def open_disputes_for_user(context):
    """(open disputes the user may decide, slug of the project holding the oldest) for the navigation badge."""
    from ..navigation import nav_badges

    request = context.get("request")
    user = getattr(request, "user", None)
    if user is None or not user.is_authenticated:
        return (0, None)
    return nav_badges(request).disputes


@register.inclusion_tag("gold/partials/turn_reopen.html", takes_context=True)
def turn_reopen_section(context, project, turn):
    """The lead's turn page: each submitted annotation of the turn, with the form that reopens it (the sentence's gold
    page had the only one)."""
    from ..gold.selectors import turn_assignments

    request = context["request"]
    return {"project": project, "assignments": turn_assignments(turn), "csrf_token": context.get("csrf_token"),
            "next": request.get_full_path()}
