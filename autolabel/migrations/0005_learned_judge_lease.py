# The learned judge's training under a lease (annotator/leases.py), and one training at a time per project.

from django.db import migrations, models
from django.utils import timezone

SUPERSEDED = ("Another training of the project was asked for at the same time (before one training at a time was "
              "enforced); this one was dropped. Train again if the project has no judge.")


def one_training_per_project(apps, schema_editor):
    """Before the constraint: of the judges in training in one project, only the latest is kept (older ones are
    failed with the reason); one left running without a lease is lapsed now, so that a worker's watchdog takes it
    up again (or fails it once JOB_MAX_ATTEMPTS workers stopped under it) instead of blocking training for good."""
    judge_model = apps.get_model("autolabel", "LearnedJudge")
    now = timezone.now()
    kept = set()
    for judge in judge_model.objects.filter(status__in=["queued", "running"]).order_by("-created_at", "-id"):
        if judge.project_id in kept:
            judge_model.objects.filter(pk=judge.pk).update(status="failed", error=SUPERSEDED, finished_at=now)
            continue
        kept.add(judge.project_id)
        if judge.status == "running":
            judge_model.objects.filter(pk=judge.pk).update(lease_until=now, attempts=1)


class Migration(migrations.Migration):

    dependencies = [
        ('autolabel', '0004_learned_judge'),
    ]

    operations = [
        migrations.AddField(
            model_name='learnedjudge',
            name='attempts',
            field=models.PositiveSmallIntegerField(default=0, help_text='Workers that took it up (one, unless a worker died under it).'),
        ),
        migrations.AddField(
            model_name='learnedjudge',
            name='lease_owner',
            field=models.CharField(blank=True, max_length=200),
        ),
        migrations.AddField(
            model_name='learnedjudge',
            name='lease_until',
            field=models.DateTimeField(blank=True, null=True),
        ),
        migrations.RunPython(one_training_per_project, migrations.RunPython.noop),
        migrations.AddConstraint(
            model_name='learnedjudge',
            constraint=models.UniqueConstraint(condition=models.Q(('status__in', ['queued', 'running'])), fields=('project',), name='one_judge_training_per_project'),
        ),
    ]
