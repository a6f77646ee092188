"""A learned judge's fitted model kept in the project's private file storage, and read back for one protocol only.

The model is serialized with joblib (scikit-learn's own way to keep a fitted estimator) into the private storage
(``annotator.storage``: no URL serves it). It is read back only for the protocol version it learned: a job of a
project that moved to another version, or that names a judge of another project, is refused with
``JudgeRefused`` before anything is predicted. A model fitted by another scikit-learn version is refused too
(joblib files are not promised to load across versions), and so is a model that reads other features than this
code computes (``features.FEATURE_VERSION``, recorded in the judge's figures when it is trained).
"""

from __future__ import annotations

import io
from typing import TYPE_CHECKING

from django.core.files.base import ContentFile

from annotator.storage import learned_judge_path

from autolabel.learned.features import FEATURE_VERSION
from autolabel.models import LearnedJudge

if TYPE_CHECKING:
    from autolabel.learned.model import JudgeModel

# scikit-learn and joblib are imported where a model is written or read: every process imports the job
# machinery (the admin, the web, the worker), and only a learned judge's run needs them.


class JudgeRefused(ValueError):
    """A learned judge that may not label here; the message says why."""


def judge_model_save(judge: LearnedJudge, model: JudgeModel) -> None:
    """Write the fitted model into the judge's file (the row is saved by the caller)."""
    import joblib
    import sklearn

    buffer = io.BytesIO()
    joblib.dump(model, buffer, compress=3)
    judge.model_file.save(f"judge-{judge.project_id}-{judge.pk}.joblib", ContentFile(buffer.getvalue()), save=False)
    judge.library_version = sklearn.__version__


def judge_feature_version(judge: LearnedJudge) -> int:
    """The version of the features the judge's model reads (1: trained before the version was recorded)."""
    return int((judge.figures or {}).get("feature_version", 1))


def judge_refusal(judge: LearnedJudge, project, protocol_version_id: int | None) -> str:
    """Why ``judge`` may not label ``project`` in ``protocol_version_id`` ("" when it may)."""
    import sklearn

    if judge.project_id != project.pk:
        return f"learned judge {judge.pk} belongs to another project"
    if judge.status != LearnedJudge.Status.DONE or not judge.model_file:
        return f"learned judge {judge.pk} has no trained model ({judge.get_status_display().lower()})"
    if judge.protocol_version_id != protocol_version_id:
        learned = judge.protocol_version.number if judge.protocol_version_id else "built-in"
        return (f"learned judge {judge.pk} learned protocol version {learned}; the project labels with another "
                "version: train a judge on its gold in the current version")
    features = judge_feature_version(judge)
    if features != FEATURE_VERSION:
        return (f"learned judge {judge.pk} was trained on features of version {features}; this version of the "
                f"application computes version {FEATURE_VERSION}: train it again")
    if judge.library_version and judge.library_version != sklearn.__version__:
        return (f"learned judge {judge.pk} was fitted by scikit-learn {judge.library_version}, this is "
                f"{sklearn.__version__}: train it again")
    return ""


def judge_model_load(judge: LearnedJudge, project, protocol_version_id: int | None) -> JudgeModel:
    """The fitted model, for the protocol version it learned only (``JudgeRefused`` otherwise)."""
    refusal = judge_refusal(judge, project, protocol_version_id)
    if refusal:
        raise JudgeRefused(refusal)
    import joblib

    with judge.model_file.open("rb") as handle:
        model = joblib.load(handle)
    if getattr(model, "feature_version", 1) != FEATURE_VERSION:  # the row said otherwise: trust the model
        raise JudgeRefused(f"learned judge {judge.pk}'s model was trained on features of version "
                           f"{getattr(model, 'feature_version', 1)}; this version of the application computes "
                           f"version {FEATURE_VERSION}: train it again")
    return model


def judge_predictions_save(judge: LearnedJudge, rows) -> str:
    """Write the judge's out-of-fold predictions (``validation.out_of_fold_rows``), one JSON line each, into the
    private storage beside its model; the file's name (the caller keeps it in the judge's figures)."""
    import json

    text = "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows)
    return judge.model_file.storage.save(learned_judge_path(judge, f"judge-{judge.project_id}-{judge.pk}-out-of-fold.jsonl"),
                                         ContentFile(text.encode("utf-8")))


def judge_predictions_open(judge: LearnedJudge):
    """The judge's out-of-fold predictions file opened for reading (bytes), or None when it kept none (trained
    before they were exported, or not trained)."""
    name = (judge.figures or {}).get("out_of_fold_file")
    storage = judge.model_file.storage
    if not name or not storage.exists(name):
        return None
    return storage.open(name, "rb")
