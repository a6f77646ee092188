"""A ready-made endpoint profile for the offline baseline server, so the demo works out of the box."""

from django.conf import settings
from django.db import migrations


def create_default_profile(apps, schema_editor):
    LLMProfile = apps.get_model("autolabel", "LLMProfile")
    LLMProfile.objects.get_or_create(
        name="Offline baseline (local)",
        defaults={
            "base_url": settings.OPENAI_BASE_URL,
            "default_model": "baseline-lexical",
            "api_key_env": "OPENAI_API_KEY",
            "supports_n": True,
            "supports_batch": True,
            "concurrency": 16,
        },
    )


class Migration(migrations.Migration):
    dependencies = [("autolabel", "0001_initial")]
    operations = [migrations.RunPython(create_default_profile, migrations.RunPython.noop)]
