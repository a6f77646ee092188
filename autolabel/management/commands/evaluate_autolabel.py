"""Score an auto-label job against gold: word-weighted P/R/F1 per threshold and evaluation view of the project's
protocol (CogniBench: its macro overall and the pooled any-hallucination F1), the trivial baselines, each family's
confusion matrix; optionally calibration, the pre-labeler as a rater, and a comparison with another job."""

import json

from django.core.management.base import BaseCommand, CommandError

from autolabel.evaluation import kind_scores, selectors as calibration_selectors
from autolabel.evaluation.protocol_views import job_protocol, scoring
from autolabel.evaluation.scores import BASELINES
from autolabel.evaluation.page import figure, scope_note
from autolabel.models import AutoLabelJob


class Command(BaseCommand):
    help = "Evaluate a job's predictions against gold (sentence level, weighted by words, as in CogniBench)."

    def add_arguments(self, parser):
        parser.add_argument("--project", required=True)
        parser.add_argument("--job", type=int, required=True)
        parser.add_argument("--json", action="store_true", help="Print the report as JSON.")
        parser.add_argument("--calibration", action="store_true",
                            help="Add calibration (reliability bins, ECE, Brier) and the pre-labeler as a rater.")
        parser.add_argument("--compare", type=int, metavar="JOB_ID",
                            help="Compare with another finished job of the project (bootstrap over turns).")

    def handle(self, *args, **o):
        job = AutoLabelJob.objects.filter(pk=o["job"], project__slug=o["project"]).select_related(
            "prompt_version", "project").first()
        if job is None:
            raise CommandError(f"no job {o['job']} in project {o['project']!r}")
        other = None
        if o["compare"] is not None:
            other = calibration_selectors.comparable_jobs(job).filter(pk=o["compare"]).first()
            if other is None:
                raise CommandError(f"no finished job {o['compare']} other than {job.pk} in project {o['project']!r}")
        if o["calibration"]:
            report = calibration_selectors.job_evaluation_report(job, other)
        else:
            report = dict(calibration_selectors.job_scores(job))
            if other is not None:
                report["comparison"] = {"a": job.pk, "b": other.pk, **calibration_selectors.job_comparison(job, other)}
        if o["json"]:
            self.stdout.write(json.dumps(report, indent=2, sort_keys=True))
            return
        read = scoring(job_protocol(job))
        self._scores(job, read, report)
        if report.get("kind_steps"):
            self.stdout.write(f"Steps of other kinds at threshold {job.threshold} (the sentences where gold and the vote "
                              "both have a value):")
            for step in report["kind_steps"]:
                self.stdout.write("  " + kind_scores.summary(step))
        if o["calibration"]:
            self._calibration(report["calibration"])
            self._rater(report["rater"])
        if other is not None:
            self._comparison(job, other, read, report["comparison"])

    def _scores(self, job, read, report):
        w = self.stdout.write
        w(f"Job {job.pk} ({job.model}, prompt v{job.prompt_version.version}, {job.samples} samples): "
          f"{report['sentences']} sentences with gold, {report['words']} words")
        names = [read.macro_id, *read.view_ids] if read.macro_id else list(read.view_ids)
        if read.macro_id:
            w(f"{read.names[read.macro_id]} = mean of the F1 of "
              + ", ".join(read.names[view] for view in read.macro_views) + ".")
        if read.pooled:
            w(f"{read.names[read.pooled]} = one F1 over every word of the protocol's hallucinations "
              "(called 'overall' before).")
        for view in read.views:
            if read.narrow(view):
                w(f"* {scope_note(job_protocol(job), view)}.")
        w(f"{'threshold':>20}  {'view':<38} {'precision':>9} {'recall':>7} {'F1':>7}")
        rows = [(str(t), views) for t, views in report["thresholds"].items()]
        rows += [(BASELINES[key], report["baselines"][key]) for key in BASELINES]
        for name, views in rows:
            for view in names:
                scores = views[view]
                cells = [_fmt(scores.get(k)) for k in ("precision", "recall", "f1")]
                w(f"{name:>20}  {read.names[view]:<38} {cells[0]:>9} {cells[1]:>7} {cells[2]:>7}")
        w("(flag none: no precision, F1 0 by convention.)")
        for family in report["confusion"].values():
            w(f"{family['name']} {len(family['rows'])}-way accuracy at threshold {job.threshold}: "
              f"{_fmt(family['accuracy'])} ({family['correct']}/{family['total']})")
            w("gold \\ predicted: " + " | ".join(family["columns"]))
            for gold in family["rows"]:
                w(f"{gold:<12} " + " ".join(f"{family['matrix'][gold][c]:>5}" for c in family["columns"]))

    def _calibration(self, calibration):
        w = self.stdout.write
        w(f"Calibration at threshold {calibration['threshold']} ({calibration['abstained']} sentences where every "
          "sample abstained left out):")
        for kind, name in (("binary", "hallucinated or not"), ("label", "the protocol's label")):
            c = calibration[kind]
            w(f"  {name}: n {c['n']}, ECE {_fmt(c['ece'])}, Brier {_fmt(c['brier'])}, accuracy {_fmt(c['accuracy'])}, "
              f"mean confidence {_fmt(c['mean_confidence'])}")
            for row in c["bins"]:
                if row["count"]:
                    w(f"    {row['low']:.1f}-{row['high']:.1f}: {row['count']:>6} predictions, "
                      f"confidence {_fmt(row['confidence'])}, accuracy {_fmt(row['accuracy'])}")

    def _rater(self, rater):
        w = self.stdout.write
        w(f"The pre-labeler as a rater ({rater['sentences']} sentences; kappa (n), alpha (n)):")
        header = ["kappa gold"] + [f"kappa {name}" for name in rater["annotators"]] + ["alpha humans", "alpha +pre"]
        w(f"  {'step':<34} " + " ".join(f"{h:>16}" for h in header))
        for variable, figures in rater["variables"].items():
            cells = [figures["kappa_gold"]] + [figures["kappa_annotators"][n] for n in rater["annotators"]]
            values = [f"{figure(c['kappa'])} ({c['n']})" for c in cells]
            values += [f"{figure(figures[k]['alpha'])} ({figures[k]['n']})" for k in ("alpha_humans", "alpha_with_prelabeler")]
            w(f"  {figures['name']:<34} " + " ".join(f"{v:>16}" for v in values) + f"   [{figures['scope']}]")

    def _comparison(self, job, other, read, comparison):
        w = self.stdout.write
        w(f"Comparison: job {job.pk} (A) vs job {other.pk} (B) on {comparison['turns']} turns, "
          f"{comparison['sentences']} sentences ({comparison['only_a']} only in A, {comparison['only_b']} only in B); "
          f"95 % bootstrap intervals over turns, {comparison['resamples']} resamples, seed {comparison['seed']}")
        for view, figures in comparison["views"].items():
            a, b, d = figures["a"], figures["b"], figures["difference"]
            w(f"  {read.names[view]:<38} A {_fmt(a['f1'])} {_ci(a['ci'])}  B {_fmt(b['f1'])} {_ci(b['ci'])}  "
              f"B-A {_fmt(d['f1'])} {_ci(d['ci'])}")


def _fmt(value):
    return "-" if value is None else f"{value:.3f}"


def _ci(interval):
    return "[-]" if interval[0] is None else f"[{interval[0]:.3f}, {interval[1]:.3f}]"
