"""``{{ field|described }}``: a form field's widget whose ``aria-describedby`` names what
``partials/field.html`` shows under it, so that a screen reader reads it with the field.

The ids are Django's own (``BoundField.aria_describedby``): ``<id>_helptext`` for the help paragraph,
``<id>_error`` for the errors. Django names the help paragraph only when the field has a ``help_text``; the
partial shows a field's ``explanation`` (what changing a setting does) in the same paragraph, and a field with an
explanation and no help text was never described.
"""

from django import template

register = template.Library()


@register.filter
def described(field):
    if field.field.widget.attrs.get("aria-describedby") or not field.auto_id or field.is_hidden:
        return str(field)
    ids = []
    if field.help_text or getattr(field.field, "explanation", ""):
        ids.append(f"{field.auto_id}_helptext")
    if field.errors:
        ids.append(f"{field.auto_id}_error")
    widget = field.as_widget(attrs={"aria-describedby": " ".join(ids)} if ids else None)
    if field.field.show_hidden_initial:
        return widget + field.as_hidden(only_initial=True)
    return widget
