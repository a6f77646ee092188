"""Django's template backend, whose pages can always be written as UTF-8 (``TEMPLATES["BACKEND"]``).

A value stored before lone surrogates were refused (``annotator.domain.storable``: a text answer, a protocol
document kept as JSON on SQLite) is not text: a page showing it failed to encode (a 500), and so did every page
of the project that showed the protocol. Such a page now shows U+FFFD (the replacement character) in its place;
a page with none is returned as rendered (the same object: safe strings stay safe).
"""

from django.template.backends.django import DjangoTemplates, Template, reraise
from django.template import TemplateDoesNotExist
from django.utils.safestring import SafeData, mark_safe

from .domain.storable import readable


class ReadableTemplate(Template):
    def render(self, context=None, request=None):
        text = super().render(context, request)
        try:
            # The cheapest test whether any character is a lone surrogate (0.6 ms for a 250 kB page, a third of a
            # regular expression's search): what the response does with the page next anyway.
            text.encode("utf-8")
        except UnicodeEncodeError:
            return mark_safe(readable(text)) if isinstance(text, SafeData) else readable(text)
        return text


class ReadableTemplates(DjangoTemplates):
    def from_string(self, template_code):
        return ReadableTemplate(self.engine.from_string(template_code), self)

    def get_template(self, template_name):
        try:
            return ReadableTemplate(self.engine.get_template(template_name), self)
        except TemplateDoesNotExist as exc:
            reraise(exc, self)
