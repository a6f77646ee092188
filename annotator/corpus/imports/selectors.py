"""Read side of a lead's data pages: turns of a project, one turn with everything on it."""

from django.db.models import Count, Prefetch, Q

from annotator.models import ClaimTriplet, Dialogue, ImportBatch, Sentence, Turn


def import_numbers(project) -> dict[int, int]:
    """Each import of the project by id -> its number in the project (1 for the first), as every page shows it: the id
    is site-wide, so a project's first import read "#2" when another project had imported before."""
    ids = ImportBatch.objects.filter(project=project).order_by("pk").values_list("pk", flat=True)
    return {pk: number for number, pk in enumerate(ids, start=1)}


def import_number(batch) -> int:
    return ImportBatch.objects.filter(project_id=batch.project_id, pk__lte=batch.pk).count()


def turn_filter_options(project) -> dict:
    dialogues = Dialogue.objects.filter(project=project)
    numbers = import_numbers(project)
    return {
        "batches": [(pk, numbers[pk], filename, created) for pk, filename, created in
                    ImportBatch.objects.filter(project=project).values_list("id", "filename", "created_at")],
        "topics": list(dialogues.exclude(topic="").order_by("topic").values_list("topic", flat=True).distinct()),
        "models": list(
            dialogues.exclude(generator_model="").order_by("generator_model")
            .values_list("generator_model", flat=True).distinct()
        ),
    }


def turn_list(project, *, batch=None, topic=None, model=None, search=None):
    """The project's turns with sentence and gold counts, filtered; ordered like the export."""
    turns = Turn.objects.filter(dialogue__project=project).select_related("dialogue", "dialogue__batch")
    if batch:
        turns = turns.filter(dialogue__batch_id=batch)
    if topic:
        turns = turns.filter(dialogue__topic=topic)
    if model:
        turns = turns.filter(dialogue__generator_model=model)
    if search:
        turns = turns.filter(Q(dialogue__external_id__icontains=search) | Q(external_id__icontains=search))
    return turns.annotate(
        sentence_count=Count("sentences", distinct=True),
        gold_count=Count("sentences__gold", distinct=True),
    ).order_by("dialogue__external_id", "index")


def turn_detail(project, turn_id) -> Turn:
    """One turn of the project with its sentences (and their gold) and triplets; Turn.DoesNotExist otherwise."""
    return (
        Turn.objects.select_related("dialogue", "dialogue__batch")
        .prefetch_related(
            Prefetch("sentences", queryset=Sentence.objects.select_related("gold", "gold__decided_by").order_by("index")),
            Prefetch("triplets", queryset=ClaimTriplet.objects.select_related("sentence").order_by("index", "id")),
        )
        .get(pk=turn_id, dialogue__project=project)
    )


def neighbour_turns(turn):
    """The previous and next turn of the same dialogue (or None)."""
    siblings = Turn.objects.filter(dialogue_id=turn.dialogue_id)
    previous = siblings.filter(index__lt=turn.index).order_by("-index").first()
    following = siblings.filter(index__gt=turn.index).order_by("index").first()
    return previous, following
