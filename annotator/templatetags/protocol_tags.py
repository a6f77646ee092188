"""The protocol in a page's words: ``{% protocol_caption project %}`` (the version a page's figures cover),
``{% yes_no_example protocol as example %}`` (the question the y / n keys answer, and y's answer) and
``{% group_label_names protocol "severity" %}`` (the names of a group's labels), from the document; the checksum
of the protocol a page walks, sent with its saves: ``{{ project|protocol_checksum }}``."""

from django import template

from ..domain.protocol.groups import reading
from ..domain.protocol.wording import label_names, yes_no_example as example_of
from ..projects.protocols import protocol_caption as caption
from ..projects.protocols import protocol_for

register = template.Library()

GROUPS = {"severity": "severity_labels", "error_type": "error_type_labels", "hallucinated": "hallucinated"}


@register.simple_tag
def protocol_caption(project) -> str:
    return caption(project)


@register.filter
def protocol_checksum(project) -> str:
    """The checksum of the project's current protocol (what the page walks; views.common.protocol_changed_answer)."""
    return protocol_for(project).checksum


@register.simple_tag
def yes_no_example(protocol) -> dict:
    question, answer = example_of(reading(protocol))
    return {"question": question, "answer": answer}


@register.simple_tag
def group_label_names(protocol, group: str) -> str:
    read = reading(protocol)
    return label_names(read, getattr(read, GROUPS[group]))
