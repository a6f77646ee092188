"""The protocol version a page's figures cover: ``{% protocol_caption project %}``; the checksum of the protocol a
page walks, sent with its saves: ``{{ project|protocol_checksum }}``."""

from django import template

from ..projects.protocols import protocol_caption as caption
from ..projects.protocols import protocol_for

register = template.Library()


@register.simple_tag
def protocol_caption(project) -> str:
    return caption(project)


@register.filter
def protocol_checksum(project) -> str:
    """The checksum of the project's current protocol (what the page walks; views.common.protocol_changed_answer)."""
    return protocol_for(project).checksum
