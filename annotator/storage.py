"""Where uploaded and exported files live: a private folder that no URL serves.

Uploads (import files) and exports (gold with every annotator's labels) are data
for a project's leads only. They are kept under ``MEDIA_ROOT`` (no URL route serves it) with
unguessable names and reach a browser only through views that check the role
(``annotator.corpus.views``), as attachments.
"""

import secrets
from pathlib import Path

from django.core.files.storage import FileSystemStorage
from django.utils.text import get_valid_filename


class PrivateStorage(FileSystemStorage):
    """A FileSystemStorage without URLs: a file is only ever sent by a view that checked the role."""

    def url(self, name):
        raise ValueError("Private files have no URL: download them through a view that checks the role.")


def private_storage() -> PrivateStorage:
    # A callable, so that the migration names this function rather than a folder of one machine.
    return PrivateStorage()


def _unguessable(folder: str, filename: str) -> str:
    """``folder/<random>-<clean name>``: the random part makes the name impossible to guess."""
    clean = get_valid_filename(Path(filename).name)[-80:] or "file"
    return f"{folder}/{secrets.token_urlsafe(18)}-{clean}"


def import_upload_path(instance, filename: str) -> str:
    return _unguessable("imports", filename)


def export_file_path(instance, filename: str) -> str:
    return _unguessable("exports", filename)


def learned_judge_path(instance, filename: str) -> str:
    """A learned judge's fitted model (autolabel.learned): trained on a project's gold, private like the gold."""
    return _unguessable("learned", filename)
