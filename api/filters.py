"""django-filter filter sets of the list endpoints."""

import django_filters
from django.db.models import Q

from annotator.models import Assignment, Dialogue, GoldLabel, Sentence, SentenceAnnotation, Turn
from annotator.corpus.selectors import AgreementState, sentence_filter_by_state
from annotator.domain.vocabulary import GoldProvenance, Label

from .serializers import MAX_ID


def IdFilter(**kwargs):  # noqa: N802 - used like the filter classes
    """An id filter; ids out of the database's range are refused with a field message."""
    return django_filters.NumberFilter(min_value=0, max_value=MAX_ID, **kwargs)


class DialogueFilter(django_filters.FilterSet):
    batch = IdFilter(field_name="batch_id", help_text="Import batch id.")
    topic = django_filters.CharFilter(help_text="Exact topic.")
    generator_model = django_filters.CharFilter(help_text="Exact name of the model that wrote the responses.")
    language = django_filters.CharFilter()
    external_id = django_filters.CharFilter(help_text="Leads only: the source's record id (400 for anyone else).")

    class Meta:
        model = Dialogue
        fields = ["batch", "topic", "generator_model", "language", "external_id"]


class TurnFilter(django_filters.FilterSet):
    dialogue = IdFilter(field_name="dialogue_id")
    batch = IdFilter(field_name="dialogue__batch_id")
    topic = django_filters.CharFilter(field_name="dialogue__topic")
    generator_model = django_filters.CharFilter(field_name="dialogue__generator_model")
    is_qualification = django_filters.BooleanFilter()

    class Meta:
        model = Turn
        fields = ["dialogue", "batch", "topic", "generator_model", "is_qualification"]


class SentenceFilter(django_filters.FilterSet):
    """Corpus filters, open to every member of the project."""

    turn = IdFilter(field_name="turn_id")
    dialogue = IdFilter(field_name="turn__dialogue_id")
    batch = IdFilter(field_name="turn__dialogue__batch_id")
    topic = django_filters.CharFilter(field_name="turn__dialogue__topic")
    generator_model = django_filters.CharFilter(field_name="turn__dialogue__generator_model")

    class Meta:
        model = Sentence
        fields = ["turn", "dialogue", "batch", "topic", "generator_model"]


class LabelledSentenceFilter(SentenceFilter):
    """Adds the gold filters, for adjudicators and leads only."""

    label = django_filters.ChoiceFilter(field_name="gold__label", choices=Label.choices, help_text="Gold label.")
    agreement_state = django_filters.ChoiceFilter(
        choices=AgreementState.choices, method="filter_state", help_text="Where the sentence stands."
    )

    class Meta(SentenceFilter.Meta):
        fields = SentenceFilter.Meta.fields + ["label", "agreement_state"]

    def filter_state(self, queryset, name, value):
        return sentence_filter_by_state(queryset, value)


class GoldFilter(django_filters.FilterSet):
    label = django_filters.ChoiceFilter(choices=Label.choices)
    provenance = django_filters.ChoiceFilter(choices=GoldProvenance.choices)
    turn = IdFilter(field_name="sentence__turn_id")
    dialogue = IdFilter(field_name="sentence__turn__dialogue_id")
    batch = IdFilter(field_name="sentence__turn__dialogue__batch_id")
    topic = django_filters.CharFilter(field_name="sentence__turn__dialogue__topic")
    generator_model = django_filters.CharFilter(field_name="sentence__turn__dialogue__generator_model")

    class Meta:
        model = GoldLabel
        fields = ["label", "provenance", "turn", "dialogue", "batch", "topic", "generator_model"]


class AssignmentFilter(django_filters.FilterSet):
    status = django_filters.ChoiceFilter(choices=Assignment.Status.choices)
    is_qualification = django_filters.BooleanFilter()
    annotator = django_filters.CharFilter(
        field_name="annotator__username", help_text="Leads only: another annotator's username."
    )

    class Meta:
        model = Assignment
        fields = ["status", "is_qualification", "annotator"]


class AnnotationFilter(django_filters.FilterSet):
    assignment = IdFilter(field_name="assignment_id")
    turn = IdFilter(field_name="sentence__turn_id")
    label = django_filters.ChoiceFilter(choices=Label.choices)
    complete = django_filters.BooleanFilter(method="filter_complete", help_text="Has a final label.")

    class Meta:
        model = SentenceAnnotation
        fields = ["assignment", "turn", "label", "complete"]

    def filter_complete(self, queryset, name, value):
        return queryset.exclude(label="") if value else queryset.filter(Q(label=""))
