"""The import upload form where a page shows it without its view building it (the project page), and whether an
export format can hold the project's gold."""

from django import template

from annotator.corpus.exports.exporters import format_refusal
from annotator.corpus.imports.forms import ImportUploadForm

register = template.Library()


@register.inclusion_tag("data/partials/import_upload_form.html", takes_context=True)
def import_upload_form(context, project):
    return {"project": project, "form": ImportUploadForm(project=project), "csrf_token": context.get("csrf_token")}


def import_file_names(batch) -> list[tuple[int, str]]:
    """``(number, original name)`` of each stored file of an import (1: the upload, 2: labels.json)."""
    names = [name.strip() for name in batch.filename.split(",")]
    files = []
    for number, stored in enumerate((batch.upload, batch.second_upload), start=1):
        if stored:
            files.append((number, names[number - 1] if len(names) >= number else stored.name.rsplit("/", 1)[-1]))
    return files


register.filter("import_files", import_file_names)


@register.filter
def number_of(import_numbers: dict, batch_id) -> int | str:
    """An import's number in its project (``import_numbers`` of the imports' selectors) from its id."""
    return import_numbers.get(batch_id, "")


@register.simple_tag
def export_refusal(project, fmt) -> str:
    """Why the project's gold cannot be exported as ``fmt`` ("" when it can): the page offers the export or says why."""
    return format_refusal(project, fmt) or ""
