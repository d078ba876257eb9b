"""`manage.py score_stel BENCHMARK.tsv [...] --methods M1,M2 [--full FULL.tsv ...] [--seed N] [--device auto]
[--predictions OUT.tsv] [--compare M1,M2] [--language TAG] [--background] --json`: score style-similarity methods on
STEL benchmarks. `score_stel --list`: every method with its languages ("*": language-independent)."""
from __future__ import annotations

from typing import Any

from core.commands import JsonCommand
from core.errors import ApplicationError
from scoring.model_scoring.methods import methods_describe
from scoring.model_scoring.runs import score_run_start
from scoring.model_scoring.services import stel_score


class Command(JsonCommand):
    help = ("Score style-similarity methods (char3gram, word_length, punctuation, uppercase, levenshtein, pos, "
            "hf:<path>, st:<path>, nsp:<path>, or a dotted path to a SimilarityMethod subclass) on STEL TSVs.")

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("benchmarks", nargs="*",
                            help="The (validated) benchmark: STEL-format TSV(s), or exports in JSONL, Parquet or a hub "
                                 "folder.")
        parser.add_argument("--methods", default="", help="Comma-separated method specs; st:minilm is the "
                            "packaged all-MiniLM-L6-v2 (English); st:<directory> a local (multilingual) model.")
        parser.add_argument("--language", default="en", help="BCP 47 tag of the benchmark's texts (default en): a "
                            "method made for another language (pos, st:minilm) is refused.")
        parser.add_argument("--list", action="store_true", help="List the methods with their languages and stop.")
        parser.add_argument("--full", nargs="+", default=[], metavar="FULL.tsv",
                            help="The unfiltered set, scored and reported beside the validated one.")
        parser.add_argument("--seed", type=int, default=0, help="Seed of the random predictions for ties.")
        parser.add_argument("--device", default="auto", choices=["auto", "cpu", "cuda"])
        parser.add_argument("--predictions", default=None, metavar="OUT.tsv",
                            help="Write one row per instance and method (STEL coding 1/2/0, similarities).")
        parser.add_argument("--compare", default=None, metavar="M1,M2", help="McNemar's test between methods.")
        parser.add_argument("--background", action="store_true",
                            help="Store a score run and queue it (on the gpu queue when a method loads a model) "
                            "instead of computing here (where "
                            "Celery is eager, as in the demo, it is computed at once); it then shows in the admin.")
        parser.add_argument("--json", action="store_true", help="Accepted for symmetry: the last line is JSON.")

    def run(self, **options: Any) -> dict[str, Any]:
        if options["list"]:
            return {"methods": methods_describe()}
        if not options["benchmarks"] or not options["methods"]:
            raise ApplicationError("give the benchmark TSV(s) and --methods (or --list)", field="methods")
        if options["background"]:
            return self.queue(**options)
        bars: dict[str, Any] = {}

        def progress(spec: str, done: int, total: int) -> None:
            bar = bars.get(spec)
            if bar is None:
                bar = bars[spec] = self.progress(total=total, desc=spec)
            bar.total = total
            bar.n = done
            bar.refresh()
            if done >= total:
                bar.close()

        try:
            return stel_score(
                benchmark_paths=options["benchmarks"], full_paths=options["full"], methods=options["methods"],
                seed=options["seed"], device=options["device"], predictions_path=options["predictions"],
                compare=options["compare"], progress=progress, language=options["language"],
            )
        finally:
            for bar in bars.values():
                bar.close()

    def queue(self, **options: Any) -> dict[str, Any]:
        if options["predictions"]:
            raise ApplicationError("--predictions is not used with --background: a stored run writes its predictions "
                                   "under MEDIA_ROOT/score_runs/")
        run = score_run_start(
            benchmark_paths=options["benchmarks"], full_paths=options["full"], methods=options["methods"],
            seed=options["seed"], device=options["device"], compare=options["compare"], created_by="score_stel",
            any_path=True, language=options["language"],
        )
        run.refresh_from_db()
        return {"score_run": run.pk, "job": run.job_id, "queue": run.job.params["queue"], "computed": run.is_computed,
                **({"results": run.results} if run.is_computed else {})}
