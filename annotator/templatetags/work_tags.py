"""The annotation screen's sentence chip: ``{% sentence_chip row %}`` (``oob=True`` swapped out of band by htmx,
``no_id=True`` for the copy in the decision panel).

Every screen draws one per sentence and every panel answer one or two: written here with ``format_html`` instead
of an included template, which cost the screen about a twentieth of its CPU (``{% include … only %}`` builds a
context and renders a template per sentence; docs/benchmarks.md).
"""

from django import template
from django.utils.html import format_html
from django.utils.safestring import mark_safe

register = template.Library()

_OUT_OF_BAND = mark_safe(' hx-swap-oob="true"')


@register.simple_tag
def sentence_chip(row, oob=False, no_id=False):
    """The chip of a ``work.selectors.SentenceRow``: its label's name, else "in progress" or "to do"."""
    label = row.label
    if label:
        state, text = label, row.label_display
    elif row.started:
        state, text = "started", "in progress"
    else:
        state, text = "pending", "to do"
    element_id = "" if no_id else format_html(' id="chip-{}"', row.sentence.pk)
    return format_html('<span{} class="chip chip-{}"{}>{}</span>', element_id, state, _OUT_OF_BAND if oob else "", text)
