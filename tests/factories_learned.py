"""A small project with gold a learned judge can learn from (original sentences about the Danube)."""

from tests.factories import DialogueFactory, ProjectFactory
from tests.factories_autolabel import REFERENCE, gold_turn


def trainable_project(turns=6, project=None):
    """``turns`` turns whose sentences all have gold: copied facts (faithful), changed numbers and names the
    reference lacks (invented), hedged judgements (speculative), greetings (irrelevant)."""
    project = project or ProjectFactory()
    dialogue = DialogueFactory(project=project, reference=REFERENCE)
    for n in range(turns):
        gold_turn(project, dialogue=dialogue, sentences=[
            ("Sure!" if n % 2 else "Happy to help.", "irrelevant"),
            ("The Danube rises in the Black Forest of Germany and flows into the Black Sea.", "faithful"),
            ("It flows for 2850 kilometres through ten countries.", "faithful"),
            (f"The explorer Marek{n} mapped {4100 + n} kilometres of it in {1750 + n}.", "invented"),
            ("Therefore it is probably the most important trade route in the whole world.", "speculative"),
        ])
    return project
