"""`manage.py annotate_with_model --study SLUG --backend openai --base-url URL --model NAME` (key from OPENAI_API_KEY
when the endpoint needs one) or `--backend local --model-dir DIR`: a model answers the study's items in every order
of display, beside the crowd and never counted with it. `--stop RUN` stops a run; `--guide` makes the finished run
the guide of the study's adaptive stopping. Last line: the JSON summary (items, requests, cache hits, accuracy,
order-sensitive share)."""
from __future__ import annotations

from typing import Any

from core.commands import JsonCommand
from core.error_codes import NOT_FOUND
from core.errors import ApplicationError
from core.jobs import job_running
from scoring.agreement.selectors import study_get
from scoring.error_codes import MISSING_STUDY
from scoring.model_annotators.guidance import model_guidance_apply
from scoring.model_annotators.runs import model_run_compute, model_run_start, model_run_stop, model_run_summary
from scoring.models import ModelRun


class Command(JsonCommand):
    help = ("Let a language model (an OpenAI-compatible endpoint, or a local causal LM) annotate a study's items "
            "beside the crowd; its answers are stored apart and compared with the crowd's on the agreement "
            "dashboard.")
    cli_fields = {"model_dir": "model_dir", "base_url": "base_url", "stop_after": "stop_after"}

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--study", help="The study whose items the model answers.")
        parser.add_argument("--backend", default="openai", help="openai (an OpenAI-compatible chat endpoint: vLLM, "
                            "llama.cpp's server, Ollama, a hosted API) or local (a causal LM directory).")
        parser.add_argument("--base-url", default="", help="The endpoint, e.g. http://127.0.0.1:8000/v1.")
        parser.add_argument("--model", default="", help="The model name the endpoint serves.")
        parser.add_argument("--model-dir", default="", help="--backend local: a directory saved with "
                            "save_pretrained (model and tokenizer); nothing is downloaded.")
        parser.add_argument("--label", default="", help="The annotator's name on the dashboard (default: the model).")
        parser.add_argument("--concurrency", type=int, default=4, help="Questions in flight at once (endpoint).")
        parser.add_argument("--timeout", type=float, default=60.0, help="Seconds per request before it is retried.")
        parser.add_argument("--retries", dest="max_retries", type=int, default=3,
                            help="Retries of a request after a time-out, 429 or 5xx (exponential back-off).")
        parser.add_argument("--backoff", type=float, default=1.0, help="First back-off in seconds (doubles).")
        parser.add_argument("--no-structured-output", dest="structured", action="store_false",
                            help="Do not send response_format (for endpoints that reject it); the reply is still "
                            "checked against the choices.")
        parser.add_argument("--max-tokens", type=int, default=64)
        parser.add_argument("--device", default="auto", choices=["auto", "cpu", "cuda"], help="--backend local.")
        parser.add_argument("--price-input", type=float, default=0.0, help="Price per 1,000 prompt tokens.")
        parser.add_argument("--price-output", type=float, default=0.0, help="Price per 1,000 completion tokens.")
        parser.add_argument("--limit", type=int, default=None, help="Only the first N items (a trial run).")
        parser.add_argument("--api-key-env", default="OPENAI_API_KEY",
                            help="The environment variable holding the endpoint's key (never stored).")
        parser.add_argument("--background", action="store_true", help="Queue the run on a worker (default queue for "
                            "an endpoint, gpu for a local model) and print its id.")
        parser.add_argument("--guide", action="store_true", help="After the run, make it the guide of the study's "
                            "adaptive stopping.")
        parser.add_argument("--stop-after", type=int, default=None,
                            help="--guide: agreeing first human answers that stop an item (default: m - 1).")
        parser.add_argument("--stop", type=int, default=None, metavar="RUN", help="Stop model run RUN.")
        parser.add_argument("--json", action="store_true", help="Only the JSON line (it is always the last line).")

    def run(self, **options: Any) -> dict[str, Any]:
        if options["stop"] is not None:
            run = ModelRun.objects.select_related("study").filter(pk=options["stop"]).first()
            if run is None:
                raise ApplicationError(f"Model run #{options['stop']} does not exist.", code=NOT_FOUND, status=404)
            return model_run_summary(model_run_stop(run=run))
        if not options["study"]:
            raise ApplicationError("Study: name the study (--study SLUG).", code=MISSING_STUDY)
        study = study_get(slug=options["study"])
        run = model_run_start(
            study=study, backend=options["backend"], model=options["model"], base_url=options["base_url"],
            model_dir=options["model_dir"], label=options["label"], concurrency=options["concurrency"],
            timeout=options["timeout"], max_retries=options["max_retries"], backoff=options["backoff"],
            structured=options["structured"], max_tokens=options["max_tokens"], device=options["device"],
            price_input=options["price_input"], price_output=options["price_output"], limit=options["limit"],
            api_key_env=options["api_key_env"], created_by="cli", enqueue=options["background"], any_path=True,
        )
        if options["background"]:
            return {"model_run": run.pk, "job": run.job_id, "queue": run.job.params.get("queue"), "queued": True}

        assert run.job_id is not None
        with job_running(run.job_id) as job:
            with self.progress_bar(f"asking {run.label}") as progress:
                run = model_run_compute(run_id=run.pk, job_id=run.job_id, progress=progress)
            if job is not None:
                job.result = model_run_summary(run)
        summary = model_run_summary(run)
        if options["guide"]:
            summary["guide"] = model_guidance_apply(run=run, stop_after=options["stop_after"])
        if not options["json"]:
            self.stdout.write(f"{run.label}: {summary['answered']} of {summary['asks']} questions answered, "
                              f"{summary['cache_hits']} from the cache, {summary['requests']} requests; accuracy "
                              f"{_fmt(summary['accuracy'])}, order-sensitive share "
                              f"{_fmt(summary['order_sensitive_share'])}")
            for warning in summary["warnings"]:
                self.stdout.write(f"Warning: {run.label} {warning}")
        return summary


def _fmt(value: Any) -> str:
    return "—" if value is None else f"{value:.3f}"
