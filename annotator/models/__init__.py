"""Every model of the app, importable from here (Django finds them here); each lives in its feature package."""

from ..work.models import AnnotationEvent, Assignment, EvidenceSpan, SentenceAnnotation, TripletAnnotation
from ..corpus.models import ClaimTriplet, Dialogue, ImportBatch, Sentence, Turn
from annotator.corpus.draws.models import DrawnTurn, TurnDraw
from annotator.corpus.exports.models import ExportJob
from annotator.corpus.units.models import SegmentationChange, UnitFlag
from ..gold.models import Adjudication, GoldEvent, GoldLabel, GoldVersion, TripletAdjudication, TripletGold
from ..projects.models import GuidelineExample, Membership, MembershipRemoval, Project, ProjectInvite, ProtocolVersion
from ..qa.models import Feedback, QualificationResult, Question, QuestionMessage

__all__ = [
    "Adjudication",
    "AnnotationEvent",
    "Assignment",
    "ClaimTriplet",
    "Dialogue",
    "DrawnTurn",
    "EvidenceSpan",
    "ExportJob",
    "Feedback",
    "GoldEvent",
    "GoldLabel",
    "GoldVersion",
    "GuidelineExample",
    "ImportBatch",
    "Membership",
    "MembershipRemoval",
    "Project",
    "ProjectInvite",
    "ProtocolVersion",
    "QualificationResult",
    "Question",
    "QuestionMessage",
    "SegmentationChange",
    "Sentence",
    "SentenceAnnotation",
    "TripletAdjudication",
    "TripletAnnotation",
    "TripletGold",
    "Turn",
    "TurnDraw",
    "UnitFlag",
]
