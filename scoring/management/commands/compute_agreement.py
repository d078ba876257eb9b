"""python manage.py compute_agreement --study SLUG [--question NAME] [--level L] [--component C] --json"""
from __future__ import annotations

from typing import Any

from core.commands import JsonCommand
from core.jobs import job_running
from scoring.agreement.runs import agreement_run_compute, agreement_run_start, agreement_run_summary
from scoring.agreement.selectors import study_get


class Command(JsonCommand):
    help = "Compute Fleiss' kappa, Krippendorff's alpha (with bootstrap CIs), majority accuracy and the rest for a " \
           "study; stores an AgreementRun. Last line: the JSON summary."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--study", required=True)
        parser.add_argument("--question", default="", help="Likert question (when the study has several).")
        parser.add_argument("--level", default="", choices=["", "nominal", "ordinal", "interval", "ratio"])
        parser.add_argument("--component", default="", help="Only items of this style component.")
        parser.add_argument("--k", type=int, default=None, help="Responses per item (default: the study's).")
        parser.add_argument("--min-correct", type=int, default=None, help="m of k (default: the study's).")
        parser.add_argument("--seed", type=int, default=0, help="Bootstrap seed.")
        parser.add_argument("--resamples", type=int, default=1000, help="Bootstrap resamples (at most).")
        parser.add_argument("--background", action="store_true", help="Queue on a Celery worker; print the job id.")
        parser.add_argument("--json", action="store_true", help="Only the JSON line (it is always the last line).")

    def run(self, **options: Any) -> dict[str, Any]:
        study = study_get(slug=options["study"])
        run = agreement_run_start(
            study=study, question=options["question"], level=options["level"], component=options["component"],
            k=options["k"], m=options["min_correct"], seed=options["seed"], resamples=options["resamples"],
            created_by="cli", enqueue=options["background"],
        )
        if options["background"]:
            return {"agreement_run": run.pk, "job": run.job_id, "queued": True}

        assert run.job_id is not None
        with job_running(run.job_id) as job:
            with self.progress_bar("bootstrap") as progress:
                run = agreement_run_compute(run_id=run.pk, job_id=run.job_id, progress=progress)
            if job is not None:
                job.result = {"agreement_run": run.pk}
        summary = agreement_run_summary(run)
        if not options["json"]:
            self.stdout.write(_table(summary))
        return summary


def _fmt(value: Any) -> str:
    return "—" if value is None else f"{value:.3f}" if isinstance(value, float) else str(value)


def _table(summary: dict[str, Any]) -> str:
    lines = [f"{'group':28} {'items':>7} {'kappa':>7} {'alpha':>7} {'acc':>7}"]
    rows = [("overall", summary)] + [(f"component {k}", v) for k, v in summary.get("components", {}).items()] + [
        (f"setup {k}", v) for k, v in summary.get("setups", {}).items()]
    for name, stats in rows:
        lines.append(f"{name:28} {stats.get('n_items', 0):>7} {_fmt(stats.get('fleiss_kappa')):>7} "
                     f"{_fmt(stats.get('krippendorff_alpha')):>7} {_fmt(stats.get('majority_accuracy')):>7}")
    lines += summary.get("irregular", {}).get("notes", [])
    return "\n".join(lines)
