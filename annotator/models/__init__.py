"""The core schema. One module per area; import models from here."""

from .annotations import AnnotationEvent, Assignment, EvidenceSpan, SentenceAnnotation, TripletAnnotation
from .corpus import ClaimTriplet, Dialogue, ImportBatch, Sentence, Turn
from .exports import ExportJob
from .gold import Adjudication, GoldEvent, GoldLabel, GoldVersion, TripletAdjudication, TripletGold
from .projects import GuidelineExample, Membership, Project
from .qa import Feedback, QualificationResult, Question, QuestionMessage

__all__ = [
    "Adjudication",
    "AnnotationEvent",
    "Assignment",
    "ClaimTriplet",
    "Dialogue",
    "EvidenceSpan",
    "ExportJob",
    "Feedback",
    "GoldEvent",
    "GoldLabel",
    "GoldVersion",
    "GuidelineExample",
    "ImportBatch",
    "Membership",
    "Project",
    "QualificationResult",
    "Question",
    "QuestionMessage",
    "Sentence",
    "SentenceAnnotation",
    "TripletAdjudication",
    "TripletAnnotation",
    "TripletGold",
    "Turn",
]
