"""``lang`` and ``dir`` of the texts a dialogue carries (its response, reference, messages).

``{% text_lang %}`` (or ``{% text_lang dialogue %}``) writes ` lang="zh" dir="auto"` for the dialogue of the
context: the language is the dialogue's (``domain.languages.language_code``), else the project's default;
``dir`` is "rtl" for right-to-left languages (Arabic, Hebrew ...) and "auto" otherwise, so that a quoted
Arabic phrase in an English answer still reads right to left. The interface around stays English.
"""

from django import template
from django.utils.html import format_html

from ..domain.languages import LanguageError, language_code, text_direction

register = template.Library()


def dialogue_language(dialogue, project=None) -> str:
    """The ISO 639-1 code of ``dialogue``'s texts, or "" when it names a language the studio does not know."""
    default = getattr(project, "default_language", "") if project is not None else ""
    try:
        return language_code(getattr(dialogue, "language", "") or "", language_code(default or ""))
    except LanguageError:
        return ""


@register.simple_tag(takes_context=True)
def text_lang(context, dialogue=None):
    dialogue = dialogue if dialogue is not None else context.get("dialogue")
    code = dialogue_language(dialogue, context.get("project"))
    if not code:
        return format_html(' dir="auto"')
    return format_html(' lang="{}" dir="{}"', code, text_direction(code))
