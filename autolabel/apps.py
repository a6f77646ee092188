from django.apps import AppConfig


class AutolabelConfig(AppConfig):
    name = "autolabel"
    verbose_name = "Auto-labelling"

    def ready(self):
        # The annotation core shows the pre-labels (export column, annotation page, claims page)
        # through hooks it owns; it never imports this app.
        from annotator import extensions

        from autolabel import unit_dependents
        from autolabel.jobs import selectors

        extensions.has_predictions.register(selectors.has_finished_job)
        extensions.latest_predictions.register(selectors.latest_predictions_by_sentence)
        extensions.prediction_values.register(selectors.prediction_values)
        extensions.prelabels_for_annotator.register(selectors.predictions_for_annotator)
        extensions.latest_severities.register(selectors.latest_severities_by_sentence)
        extensions.unit_dependents.register(unit_dependents.unit_dependents)
        extensions.unit_dependents_remove.register(unit_dependents.unit_dependents_remove)
