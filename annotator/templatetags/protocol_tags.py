"""The protocol version a page's figures cover: ``{% protocol_caption project %}``."""

from django import template

from ..projects.protocols import protocol_caption as caption

register = template.Library()


@register.simple_tag
def protocol_caption(project) -> str:
    return caption(project)
