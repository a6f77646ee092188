"""``lang`` and ``dir`` of the texts a dialogue carries (its response, reference, messages).

``{% text_lang %}`` (or ``{% text_lang dialogue %}``) writes ` lang="zh" dir="auto"` for the dialogue of the
context: the language is the dialogue's (``domain.languages.language_code``), else the project's default;
``dir`` is "rtl" for right-to-left languages (Arabic, Hebrew ...) and "auto" otherwise, so that a quoted
Arabic phrase in an English answer still reads right to left. The interface around stays English.
"""

from django import template
from django.utils.html import format_html

from ..domain.languages import text_attributes, text_language

register = template.Library()


@register.simple_tag(takes_context=True)
def text_lang(context, dialogue=None):
    dialogue = dialogue if dialogue is not None else context.get("dialogue")
    project = context.get("project")
    attributes = text_attributes(text_language(getattr(dialogue, "language", ""),
                                               getattr(project, "default_language", "")))
    if "lang" not in attributes:
        return format_html(' dir="{}"', attributes["dir"])
    return format_html(' lang="{}" dir="{}"', attributes["lang"], attributes["dir"])
