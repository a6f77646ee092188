"""Serializers: the shape of what goes in and out. Meaning is checked by the services.

One module per resource, as the views (``api/views/``); every serializer is importable from here,
so that a view names the ones it uses (``from ..serializers import X``) whatever module holds them.
"""

from .common import MAX_ID, PROJECT_DEFINED, PathField, ProtocolValueField, blank_label
from .auth import (
    MeSerializer,
    TokenRequestSerializer,
    TokenSerializer,
)
from .projects import (
    ProjectSerializer,
    ProjectSettingsSerializer,
    MemberSerializer,
    MemberAddSerializer,
    MemberRemovedSerializer,
    MemberRoleSerializer,
)
from .corpus import (
    ImportProgressSerializer,
    ImportBatchSerializer,
    ImportUploadSerializer,
    DialogueSerializer,
    SentenceBriefSerializer,
    TurnSerializer,
    SentenceSerializer,
    LabelledSentenceSerializer,
)
from .work import (
    AssignmentSerializer,
    SentenceAnnotationSerializer,
    AssignmentDetailSerializer,
    ReasonSerializer,
    ReassignSerializer,
)
from .workflow import (
    AnswerStepSerializer,
    PickLabelSerializer,
    UndoSerializer,
    NoteSerializer,
    EvidenceAddSerializer,
    EvidenceRemoveSerializer,
    SubmitSerializer,
    EvidenceSpanSerializer,
    ActionResultSerializer,
)
from .gold import (
    GoldSerializer,
    DisputedAnnotationSerializer,
    AdjudicationSerializer,
    ResolveSerializer,
    AgreementReportSerializer,
    GoldOverrideSerializer,
)
from .qa import (
    QualificationAttemptSerializer,
    QualificationAnnotatorSerializer,
    QualificationSerializer,
    QualificationSetSerializer,
)
from .autolabel import (
    JobEvaluationSerializer,
)

__all__ = [
    "PROJECT_DEFINED", "PathField", "ProtocolValueField", "blank_label",
    "ActionResultSerializer",
    "AdjudicationSerializer",
    "AgreementReportSerializer",
    "AnswerStepSerializer",
    "AssignmentDetailSerializer",
    "AssignmentSerializer",
    "DialogueSerializer",
    "DisputedAnnotationSerializer",
    "EvidenceAddSerializer",
    "EvidenceRemoveSerializer",
    "EvidenceSpanSerializer",
    "GoldOverrideSerializer",
    "GoldSerializer",
    "ImportBatchSerializer",
    "ImportProgressSerializer",
    "ImportUploadSerializer",
    "JobEvaluationSerializer",
    "LabelledSentenceSerializer",
    "MAX_ID",
    "MeSerializer",
    "MemberAddSerializer",
    "MemberRemovedSerializer",
    "MemberRoleSerializer",
    "MemberSerializer",
    "NoteSerializer",
    "PickLabelSerializer",
    "ProjectSerializer",
    "ProjectSettingsSerializer",
    "QualificationAnnotatorSerializer",
    "QualificationAttemptSerializer",
    "QualificationSerializer",
    "QualificationSetSerializer",
    "ReasonSerializer",
    "ReassignSerializer",
    "ResolveSerializer",
    "SentenceAnnotationSerializer",
    "SentenceBriefSerializer",
    "SentenceSerializer",
    "SubmitSerializer",
    "TokenRequestSerializer",
    "TokenSerializer",
    "TurnSerializer",
    "UndoSerializer",
]
