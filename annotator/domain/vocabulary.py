"""The annotation vocabulary, defined once.

Every label, protocol step and answer value the application knows is named
here. Models, forms, serializers, prompts, importers and reports import these
names instead of spelling strings of their own.

The taxonomy is CogniBench's: a sentence is irrelevant, or it is factual
(faithful | invented), or it is cognitive and judged by three criteria taken in
order (rational -> grounded -> unequivocal), stopping at the first 'no'.
"""

from django.db.models.enums import IntegerChoices, TextChoices  # the choice enums only: no ORM here


class Label(TextChoices):
    """The seven final sentence labels."""

    IRRELEVANT = "irrelevant", "Irrelevant"
    FAITHFUL = "faithful", "Faithful"
    INVENTED = "invented", "Invented"
    MISLEADING = "misleading", "Misleading"
    SPECULATIVE = "speculative", "Speculative"
    RELIABLE = "reliable", "Reliable"
    UNEQUIVOCAL = "unequivocal", "Unequivocal"


FACTUAL_LABELS = frozenset({Label.FAITHFUL, Label.INVENTED})
COGNITIVE_LABELS = frozenset(
    {Label.MISLEADING, Label.SPECULATIVE, Label.RELIABLE, Label.UNEQUIVOCAL}
)
# What CogniBench counts as a hallucination: invented facts, and cognitive
# statements that are not rational (misleading) or rational but ungrounded
# (speculative).
HALLUCINATED_LABELS = frozenset({Label.INVENTED, Label.MISLEADING, Label.SPECULATIVE})
COGNITIVE_HALLUCINATED_LABELS = frozenset({Label.MISLEADING, Label.SPECULATIVE})


class Step(TextChoices):
    """The questions of the sequential protocol, in the order they are asked."""

    # Worded so that its first answer (key 1, and y) is "yes", as at every later yes/no step.
    RELEVANCE = "relevance", "Is the sentence relevant?"
    KIND = "kind", "Factual or cognitive?"
    FAITHFULNESS = "faithfulness", "Faithful or invented?"
    RATIONAL = "rational", "Is it rational?"
    GROUNDED = "grounded", "Is it grounded in the reference?"
    UNEQUIVOCAL = "unequivocal", "Is it unequivocal?"


class Answer(TextChoices):
    """Every value a protocol step accepts."""

    IRRELEVANT = "irrelevant", "Irrelevant"
    RELEVANT = "relevant", "Relevant"
    FACTUAL = "factual", "Factual"
    COGNITIVE = "cognitive", "Cognitive"
    FAITHFUL = "faithful", "Faithful"
    INVENTED = "invented", "Invented"
    YES = "yes", "Yes"
    NO = "no", "No"


# The two answers each step offers, first one bound to key 1 / y, second to 2 / n.
STEP_ANSWERS: dict[Step, tuple[Answer, Answer]] = {
    Step.RELEVANCE: (Answer.RELEVANT, Answer.IRRELEVANT),
    Step.KIND: (Answer.FACTUAL, Answer.COGNITIVE),
    Step.FAITHFULNESS: (Answer.FAITHFUL, Answer.INVENTED),
    Step.RATIONAL: (Answer.YES, Answer.NO),
    Step.GROUNDED: (Answer.YES, Answer.NO),
    Step.UNEQUIVOCAL: (Answer.YES, Answer.NO),
}

# y / n answer a question as it is worded: "Is the sentence relevant?" yes -> relevant. At every step y is the
# first answer (key 1) and n the second (key 2).
YES_NO_KEYS: dict[Answer, str] = {Answer.YES: "y", Answer.NO: "n", Answer.RELEVANT: "y", Answer.IRRELEVANT: "n"}

COGNITIVE_CRITERIA = (Step.RATIONAL, Step.GROUNDED, Step.UNEQUIVOCAL)


class Role(TextChoices):
    """A person's role in one project."""

    ANNOTATOR = "annotator", "Annotator"
    ADJUDICATOR = "adjudicator", "Adjudicator"
    LEAD = "lead", "Lead"


class ProtocolMode(TextChoices):
    """How annotators walk the project's protocol, whichever it is (pages add its number of labels:
    ``projects.protocols.protocol_mode_name``)."""

    SEQUENTIAL = "sequential", "Sequential: the protocol's questions, one at a time"
    INDEPENDENT = "independent", "Independent: pick the final label at once"


class GoldProvenance(TextChoices):
    IMPORTED = "imported", "Imported"
    AGREEMENT = "agreement", "Annotators agreed"
    ADJUDICATION = "adjudication", "Adjudicated"
    OVERRIDE = "override", "Lead override"
    REVIEW = "review", "One annotator's review of a drawn turn"


class ImportedGold(TextChoices):
    """What gold imported with the data is, once a project's own annotators label the same sentences."""

    FINAL = "final", "Final: annotators' agreement keeps it; their disagreement can still be adjudicated to replace it"
    REFERENCE = "reference", "A reference: the annotators' agreement or an adjudication replaces it"


class AdjudicationOrder(TextChoices):
    """The order in which a project's adjudication queue lists turns (the leads choose)."""

    OLDEST = "oldest", "Oldest dispute first"
    MOST_DISPUTED = "most_disputed", "Most disputed turns first"
    BATCH = "batch", "By import batch, then oldest"


class UnitFlagKind(TextChoices):
    """Why an annotator flags a unit as mis-segmented."""

    TWO_SENTENCES = "two_sentences", "Two sentences"
    NOT_A_SENTENCE = "not_a_sentence", "Not a sentence"
    OTHER = "other", "Other"


class DrawStrategy(TextChoices):
    """How turns are drawn for human annotation of a pre-labelling job's output."""

    RANDOM = "random", "At random (supports bias-corrected estimates)"
    UNCERTAINTY = "uncertainty", "Smallest vote margin first"


class DrawnTurnReview(TextChoices):
    """How drawn turns become gold."""

    DOUBLE = "double", "The project's normal double annotation and adjudication"
    SINGLE = "single", "One annotator's review is gold"


class TripletLabel(TextChoices):
    """RefChecker's claim-level labels, plus a mark for a badly extracted triplet."""

    ENTAILMENT = "Entailment", "Entailment"
    NEUTRAL = "Neutral", "Neutral"
    CONTRADICTION = "Contradiction", "Contradiction"
    BAD_TRIPLET = "bad", "Bad triplet"


class TripletSource(TextChoices):
    IMPORTED = "imported", "Imported"
    MANUAL = "manual", "Added by hand"
    LLM = "llm", "Extracted by the LLM"


class Severity(IntegerChoices):
    """HalluDetect's 1-5 severity of a hallucination."""

    NEGLIGIBLE = 1, "1 - negligible"
    MINOR = 2, "2 - minor"
    MODERATE = 3, "3 - moderate"
    MAJOR = 4, "4 - major"
    CRITICAL = 5, "5 - critical"


# Face4RAG's typology of factual errors; a project may replace the list.
DEFAULT_ERROR_TYPES = (
    "hallucination (unverifiable)",
    "contradiction",
    "entity inversion",
    "conflation",
    "conceptual substitution",
    "overgeneralization",
    "causal confusion",
    "confusing sufficient and necessary conditions",
    "inclusion relation",
    "other logical fallacy",
    "other",
)

# Labels for which severity and error type may be given.
SEVERITY_LABELS = HALLUCINATED_LABELS
ERROR_TYPE_LABELS = frozenset({Label.INVENTED, Label.MISLEADING})
