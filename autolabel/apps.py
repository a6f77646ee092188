from django.apps import AppConfig


class AutolabelConfig(AppConfig):
    name = "autolabel"
    verbose_name = "Auto-labelling"
