"""Factories and helpers for the auto-labeller tests."""

from annotator.models import GoldLabel
from annotator.domain.protocol import path_for_label
from annotator.domain.vocabulary import GoldProvenance
from tests.factories import DialogueFactory, ProjectFactory, TurnFactory

REFERENCE = (
    "The Danube is the second-longest river in Europe. It rises in the Black Forest of Germany and flows "
    "south-east for 2850 kilometres through ten countries before it empties into the Black Sea. "
    "Vienna, Bratislava, Budapest and Belgrade stand on its banks."
)

# (sentence, gold label): an original little corpus about the Danube.
DANUBE_TURN = [
    ("Sure!", "irrelevant"),
    ("The Danube rises in the Black Forest of Germany and flows into the Black Sea.", "faithful"),
    ("It flows for 2850 kilometres through ten countries.", "faithful"),
    ("The river was named after a Roman goddess of pearls and silver fish.", "invented"),
    ("Therefore the Danube is probably the most important trade route in the whole world.", "speculative"),
]


def gold_turn(project=None, sentences=DANUBE_TURN, reference=REFERENCE, dialogue=None):
    """A turn whose sentences all have gold."""
    project = project or ProjectFactory()
    dialogue = dialogue or DialogueFactory(project=project, reference=reference)
    turn = TurnFactory(dialogue=dialogue, sentences=[text for text, _ in sentences], user_message="Tell me about the Danube.")
    for sentence, (_, label) in zip(turn.sentences.order_by("index"), sentences):
        GoldLabel.objects.create(sentence=sentence, label=label, path=path_for_label(label),
                                 provenance=GoldProvenance.IMPORTED)
    return turn


def plain_turns(project, count, sentences=None):
    dialogue = DialogueFactory(project=project, reference=REFERENCE)
    texts = [text for text, _ in (sentences or DANUBE_TURN)]
    return [TurnFactory(dialogue=dialogue, sentences=texts) for _ in range(count)]
