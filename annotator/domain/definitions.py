"""What each protocol question and each label means, as shown to annotators.

The names themselves live in ``annotator.domain.vocabulary``; this module holds the
explanatory text for them (CogniBench's definitions, in plain words).
"""

from .vocabulary import Label, Step

STEP_DEFINITIONS: dict[Step, str] = {
    Step.RELEVANCE: (
        "Irrelevant sentences carry nothing to check against the reference: greetings, filler, "
        "restating the question, offers of further help. Anything that says something about the "
        "topic is relevant."
    ),
    Step.KIND: (
        "Factual: the sentence reports information (a fact, figure, name, date or event) that can be "
        "checked directly against the reference. Cognitive: it goes beyond reporting: an inference, "
        "explanation, evaluation, comparison, prediction, opinion or advice."
    ),
    Step.FAITHFULNESS: (
        "Faithful: the reference states this information. Invented: the reference does not contain "
        "it, or says something different."
    ),
    Step.RATIONAL: (
        "Rational: the reasoning is logically sound and does not lead the reader to a wrong "
        "conclusion. No means misleading: illogical, self-contradictory or drawing a conclusion "
        "the premises cannot support."
    ),
    Step.GROUNDED: (
        "Grounded: the reference supplies evidence for the statement. No means speculative: "
        "sensible, but nothing in the reference backs it."
    ),
    Step.UNEQUIVOCAL: (
        "Unequivocal: the reference leaves no other reasonable conclusion. No means reliable: well "
        "supported, but other conclusions remain possible."
    ),
}

LABEL_DEFINITIONS: dict[Label, str] = {
    Label.IRRELEVANT: "Carries nothing to check: greetings, filler, restating the question.",
    Label.FAITHFUL: "Factual, and the reference states it.",
    Label.INVENTED: "Factual, but the reference does not contain it or contradicts it.",
    Label.MISLEADING: "Cognitive, and not rational: illogical or leading to a wrong conclusion.",
    Label.SPECULATIVE: "Cognitive and rational, but nothing in the reference backs it.",
    Label.RELIABLE: "Cognitive, rational and grounded in the reference, but other conclusions remain possible.",
    Label.UNEQUIVOCAL: "Cognitive, rational, grounded, and the only reasonable conclusion.",
}
