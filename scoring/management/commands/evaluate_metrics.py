"""evaluate_metrics: correlate automatic metrics with the mean human rating of a Likert study's question.

    python manage.py evaluate_metrics --study SLUG --question NAME --metrics bleu,chrf,logprob \
        [--by style] [--model-path DIR] [--embedding-model DIR] [--bertscore-model DIR] [--bertscore-layers N]
        [--nli-model DIR] [--lm-model DIR] [--cross-encoder-model DIR] [--llm-base-url URL --llm-model NAME]
        [--device auto|cpu|cuda] [--batch-size N] --json
    python manage.py evaluate_metrics --list     (every metric, its languages and whether it needs a model)
"""
from __future__ import annotations

from typing import Any

from core.commands import JsonCommand
from core.errors import ApplicationError
from scoring.error_codes import NO_METRICS
from scoring.metric_evaluation import metric_catalogue, metric_names
from scoring.metric_evaluation.services import metric_evaluation_run, metric_evaluation_summary


class Command(JsonCommand):
    help = "Meta-evaluate automatic metrics against human Likert ratings (Spearman per style, overall, per system)."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--list", action="store_true", help="List the metrics with their languages and stop.")
        parser.add_argument("--study", default="", help="Slug of a likert study.")
        parser.add_argument("--question", default="", help="Likert question whose mean valid rating is compared.")
        parser.add_argument("--metrics", default="", help=f"Comma-separated; known: {', '.join(metric_names())}.")
        parser.add_argument("--by", default="", choices=["", "style", "dataset"],
                            help="Also correlate per target style or per dataset (the items' `dataset`).")
        parser.add_argument("--model-path", default="", help="Local model directory for model metrics without "
                                                              "their own option.")
        parser.add_argument("--embedding-model", default="", help="sentence-transformers directory for "
                                                                   "embedding_cosine (default: packaged MiniLM).")
        parser.add_argument("--bertscore-model", default="", help="Model directory for bertscore (default: MiniLM).")
        parser.add_argument("--bertscore-layers", type=int, default=None, help="Layer bertscore uses (default last).")
        parser.add_argument("--nli-model", default="", help="NLI sequence-classification directory for nli_mutual.")
        parser.add_argument("--lm-model", default="", help="Causal LM directory for logprob.")
        parser.add_argument("--cross-encoder-model", default="", help="One-output cross-encoder directory for "
                                                                       "cross_encoder.")
        parser.add_argument("--llm-base-url", default="", help="OpenAI-compatible endpoint for llm_rater.")
        parser.add_argument("--llm-model", default="", help="The model's name at that endpoint (llm_rater).")
        parser.add_argument("--device", default="auto", help="auto, cpu or cuda.")
        parser.add_argument("--batch-size", type=int, default=None)
        parser.add_argument("--json", action="store_true", help="Accepted for symmetry: the last line is always JSON.")

    def run(self, **options: Any) -> dict[str, Any]:
        if options["list"]:
            catalogue = metric_catalogue()
            for entry in catalogue:
                self.stderr.write(f"{entry['name']:18} {','.join(entry['languages']):6} {entry['description']}")
            return {"metrics": catalogue}
        if not options["study"] or not options["question"]:
            raise ApplicationError("give --study and --question (or --list)", code=NO_METRICS)
        names = [name.strip() for name in options["metrics"].split(",") if name.strip()]
        metric_options: dict[str, Any] = {
            "model_path": options["model_path"], "device": options["device"], "batch_size": options["batch_size"],
            "embedding_cosine": {"model_path": options["embedding_model"]},
            "bertscore": {"model_path": options["bertscore_model"], "num_layers": options["bertscore_layers"]},
            "nli_mutual": {"model_path": options["nli_model"]},
            "logprob": {"model_path": options["lm_model"]},
            "cross_encoder": {"model_path": options["cross_encoder_model"]},
            "llm_rater": {"base_url": options["llm_base_url"], "model": options["llm_model"]},
        }
        bar = self.progress(total=0, desc="metrics")

        def report(done: int, total: int) -> None:
            bar.total = total
            bar.n = done
            bar.refresh()

        try:
            evaluation = metric_evaluation_run(
                study_slug=options["study"], question=options["question"], metric_names=names,
                options=metric_options, by=options["by"], created_by="cli", progress=report,
            )
        finally:
            bar.close()
        return metric_evaluation_summary(evaluation)
