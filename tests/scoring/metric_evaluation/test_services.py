"""The meta-evaluation: Spearman per style/overall/system on constructed ratings, the CLI, bad input, the task."""
from __future__ import annotations

import io
import json

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from rapidfuzz.distance import Levenshtein
from scipy.stats import spearmanr

from core.errors import ApplicationError
from core.models import Job
from scoring.metric_evaluation.correlation import by_group, spearman, system_level
from scoring.metric_evaluation.services import metric_evaluation_run
from scoring.models import MetricEvaluation
from tests.scoring.metric_fixtures import likert_study, tiny_gpt2_dir, turk_rows

pytestmark = pytest.mark.django_db

SYSTEMS = ["sys-a", "sys-b", "sys-c"]


# --- statistics on constructed values -----------------------------------------------------------------------


def test_spearman_known_values():
    # d = (-1, 1, -1, 1, 0): rho = 1 - 6 * 4 / (5 * 24) = 0.8
    result = spearman([1, 2, 3, 4, 5], [2, 1, 4, 3, 5])
    assert result["rho"] == pytest.approx(0.8)
    assert result["p"] == pytest.approx(spearmanr([1, 2, 3, 4, 5], [2, 1, 4, 3, 5]).pvalue)
    assert result["n"] == 5
    assert spearman([1, 2, 3, 4], [40, 30, 20, 10])["rho"] == pytest.approx(-1.0)
    # Items a metric could not score (no reference) are left out, not counted as 0.
    assert spearman([None, 2, 3, 4, 5], [9, 1, 2, 3, 4]) == {"rho": pytest.approx(1.0), "p": pytest.approx(0.0),
                                                             "n": 4}
    assert spearman([1, 1, 1], [1, 2, 3])["rho"] is None
    assert spearman([1, 2], [1, 2])["note"] == "fewer than 3 scored items"


def test_per_style_groups():
    groups = by_group([1, 2, 3, 1, 2, 3], [1, 2, 3, 3, 2, 1], ["formal"] * 3 + ["informal"] * 3)
    assert groups["formal"]["rho"] == pytest.approx(1.0)
    assert groups["informal"]["rho"] == pytest.approx(-1.0)


def test_system_level_correlation_and_best_pick():
    human = [4.0, 5.0, 2.0, 3.0, 1.0, 1.5]
    systems = ["a", "a", "b", "b", "c", "c"]  # human means: a 4.5, b 2.5, c 1.25
    agrees = system_level([0.9, 0.8, 0.5, 0.6, 0.1, 0.2], human, systems)
    assert agrees["human_best"] == ["a"] and agrees["metric_best"] == ["a"] and agrees["picks_best"] is True
    assert agrees["rho"] == pytest.approx(1.0)
    assert agrees["means"]["b"] == {"human": 2.5, "metric": pytest.approx(0.55), "n": 2}
    wrong = system_level([0.1, 0.2, 0.9, 0.8, 0.4, 0.4], human, systems)
    assert wrong["metric_best"] == ["b"] and wrong["picks_best"] is False
    assert wrong["rho"] == pytest.approx(-0.5)
    tie = system_level([0.5, 0.5, 0.5, 0.5, 0.1, 0.1], human, systems)
    assert tie["picks_best"] is False  # a tie at the top is not a pick
    assert system_level([1, 2], [1, 2], ["a", "a"])["note"] == "fewer than 2 systems"


# --- service and command on a Likert study built from real sentences ------------------------------------------


def _turk_study(shared_data, *, n: int = 18, slug: str = "turk-likert"):
    """Items = TurkCorpus (complex → turker rewrite), three made-up systems, two styles. The valid ratings are
    constructed as 1 + 4 × Levenshtein similarity (±0.5 between two raters, so the mean is exact); excluded
    participants rate the opposite way, so counting them would reverse the correlation."""
    rows = turk_rows(shared_data, n)
    items, ratings, invalid = [], [], []
    for k, row in enumerate(rows):
        items.append({"source": row["complex"], "rewrite": row["turk"], "reference": row["simple"],
                      "target_style": "simple" if k % 2 else "plain", "system": SYSTEMS[k % 3]})
        target = 1 + 4 * Levenshtein.normalized_similarity(row["turk"], row["complex"])
        ratings.append([target - 0.5, target + 0.5])
        invalid.append([6 - target, 6 - target, 6 - target])
    return likert_study(items=items, ratings=ratings, invalid_ratings=invalid, slug=slug), items, ratings


def _call(*args: str) -> tuple[dict, str]:
    out = io.StringIO()
    call_command("evaluate_metrics", *args, stdout=out, stderr=io.StringIO())
    lines = out.getvalue().strip().splitlines()
    return json.loads(lines[-1]), out.getvalue()


def test_evaluate_metrics_command_end_to_end(shared_data):
    _, items, ratings = _turk_study(shared_data)
    summary, _ = _call("--study", "turk-likert", "--question", "content", "--metrics", "levenshtein,bleu,chrf",
                       "--by", "style", "--json")
    assert summary["ok"] is True and summary["n_items"] == len(items)
    # Only the two valid ratings per item count.
    assert summary["n_ratings"] == 2 * len(items)
    lev = summary["correlations"]["levenshtein_src"]
    assert lev["rho"] == pytest.approx(1.0) and lev["p"] < 1e-6 and lev["n"] == len(items)
    assert set(lev["by_style"]) == {"plain", "simple"}
    assert lev["by_style"]["simple"]["n"] == len(items) // 2 and lev["by_style"]["simple"]["rho"] == pytest.approx(1)
    # Other columns: what scipy says about the same numbers.
    evaluation = MetricEvaluation.objects.get(pk=summary["evaluation"])
    results = evaluation.results
    human = [row["human"] for row in results["items"]]
    assert human == pytest.approx([sum(r) / 2 for r in ratings])
    bleu = [row["scores"]["bleu_ref"] for row in results["items"]]
    assert summary["correlations"]["bleu_ref"]["rho"] == pytest.approx(spearmanr(bleu, human).statistic)
    assert summary["correlations"]["bleu_ref"]["p"] == pytest.approx(spearmanr(bleu, human).pvalue)
    # System level (Babakov et al. Table 4): the metric the ratings were built from picks the human-best system.
    system = summary["correlations"]["levenshtein_src"]["system"]
    assert system["n_systems"] == 3 and system["picks_best"] is True and system["rho"] == pytest.approx(1.0)
    assert set(summary["timings"]) == {"levenshtein", "bleu", "chrf"}
    assert evaluation.computed_at is not None and evaluation.by_style and evaluation.metrics == [
        "levenshtein", "bleu", "chrf"]


@pytest.mark.model
def test_logprob_through_the_service_with_a_tiny_lm(shared_data, tmp_path):
    _turk_study(shared_data, n=6, slug="turk-lm")
    path = tiny_gpt2_dir(tmp_path / "lm")
    evaluation = metric_evaluation_run(study_slug="turk-lm", question="content", metric_names=["logprob"],
                                       options={"logprob": {"model_path": str(path)}, "batch_size": 4})
    columns = evaluation.results["columns"]
    assert set(columns) == {"logprob_content", "logprob_style"}
    assert all(row["scores"]["logprob_content"] < 0 for row in evaluation.results["items"])
    assert evaluation.params["options"]["logprob"]["templates"]["repeat"].startswith("Repeat the following")


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (["--study", "turk-likert", "--question", "content", "--metrics", "bleu,bleurt"], "unknown metric(s) bleurt"),
        (["--study", "no-such-study", "--question", "content", "--metrics", "bleu"], "study 'no-such-study'"),
        (["--study", "turk-likert", "--question", "meaning", "--metrics", "bleu"], "no question 'meaning'"),
        (["--study", "turk-likert", "--question", "fluency", "--metrics", "bleu"], "no valid ratings"),
        (["--study", "turk-likert", "--question", "content", "--metrics", "logprob"], "--lm-model"),
        (["--study", "turk-likert", "--question", "content", "--metrics", "nli_mutual", "--nli-model", "/nope"],
         "'/nope' is not a local model directory"),
    ],
)
def test_bad_input_is_a_clear_error_and_stores_nothing(shared_data, args, fragment):
    _turk_study(shared_data, n=4)
    out = io.StringIO()
    with pytest.raises(CommandError) as error:
        call_command("evaluate_metrics", *args, "--json", stdout=out, stderr=io.StringIO())
    assert error.value.returncode == 1
    assert fragment in str(error.value)
    last = json.loads(out.getvalue().strip().splitlines()[-1])
    assert last["ok"] is False and fragment in last["error"]["message"]
    assert MetricEvaluation.objects.count() == 0


def test_study_with_only_excluded_ratings_is_rejected():
    likert_study(items=[{"source": "a b c", "rewrite": "a b"}] * 1, ratings=[[]], invalid_ratings=[[3, 4]],
                 slug="only-invalid")
    with pytest.raises(ApplicationError, match="no valid ratings"):
        metric_evaluation_run(study_slug="only-invalid", question="content", metric_names=["bleu"])
    assert MetricEvaluation.objects.count() == 0


def test_item_without_rewrite_names_the_item():
    likert_study(items=[{"source": "Hello there.", "rewrite": "Hi."}, {"source": "Good bye.", "rewrite": ""}],
                 ratings=[[3], [4]], slug="broken-item")
    with pytest.raises(ApplicationError, match="item 'item-1': payload field 'rewrite'"):
        metric_evaluation_run(study_slug="broken-item", question="content", metric_names=["chrf"])


def test_non_likert_study_is_rejected():
    from tests.factories import StudyFactory

    StudyFactory(slug="quads")
    with pytest.raises(ApplicationError, match="needs a likert study"):
        metric_evaluation_run(study_slug="quads", question="content", metric_names=["bleu"])


# --- the Celery door -------------------------------------------------------------------------------------------


def test_start_queues_on_the_right_queue_and_the_task_fills_results(shared_data, django_capture_on_commit_callbacks,
                                                                    settings):
    import redis

    from scoring.celery_tasks.metric_evaluation import metric_evaluation_execute_task
    from scoring.metric_evaluation.services import metric_evaluation_start

    _turk_study(shared_data, n=9)
    broker = redis.Redis.from_url(settings.CELERY_BROKER_URL)
    broker.delete("gpu", "default")
    with django_capture_on_commit_callbacks(execute=True):
        lexical = metric_evaluation_start(study_slug="turk-likert", question="content",
                                          metric_names=["levenshtein"], created_by="tester")
    with django_capture_on_commit_callbacks(execute=True):
        model = metric_evaluation_start(study_slug="turk-likert", question="content",
                                        metric_names=["embedding_cosine"], created_by="tester")
    # The messages are really on the broker's queues: model metrics on `gpu`, the rest on `default`.
    assert broker.llen("default") == 1 and broker.llen("gpu") == 1
    broker.delete("gpu", "default")
    assert lexical.results == {} and lexical.job.status == Job.Status.CREATED
    assert lexical.job.params["queue"] == "default" and model.job.params["queue"] == "gpu"

    # What the worker runs, called directly; running it twice does not recompute (idempotent).
    metric_evaluation_execute_task(lexical.job_id, lexical.pk)
    lexical.refresh_from_db()
    job = Job.objects.get(pk=lexical.job_id)
    # (Progress rows are written outside transactions, so this transactional test sees none; the worker test does.)
    assert job.status == Job.Status.DONE and job.error == ""
    assert lexical.results["columns"]["levenshtein_src"]["overall"]["rho"] == pytest.approx(1.0)
    assert job.result["rho"]["levenshtein_src"] == pytest.approx(1.0)
    computed_at = lexical.computed_at
    metric_evaluation_execute_task(lexical.job_id, lexical.pk)
    lexical.refresh_from_db()
    assert lexical.computed_at == computed_at


# --- languages -----------------------------------------------------------------------------------------------


def _study_in(language: str | None) -> None:
    extra = {"language": language} if language else {}
    likert_study(items=[{"source": f"Der Satz {n}", "rewrite": f"Ein Satz {n}", "system": "s", **extra}
                        for n in range(4)], ratings=[[1, 2], [2, 3], [3, 4], [4, 5]])


def test_a_metric_for_english_is_refused_on_a_study_in_german():
    _study_in("de")
    for name in ("meteor", "rouge"):
        with pytest.raises(ApplicationError, match=rf"metric '{name}' supports en only; this study's texts are de"):
            metric_evaluation_run(study_slug="likert-test", question="content", metric_names=["chrf", name])
    # The packaged MiniLM is English; the language-neutral metrics run.
    with pytest.raises(ApplicationError, match="'embedding_cosine' supports en only"):
        metric_evaluation_run(study_slug="likert-test", question="content", metric_names=["embedding_cosine"])
    evaluation = metric_evaluation_run(study_slug="likert-test", question="content",
                                       metric_names=["chrf", "bleu_char", "levenshtein"])
    assert evaluation.results["columns"]["bleu_char_src"]["overall"]["n"] == 4
    assert MetricEvaluation.objects.count() == 1


def test_english_metrics_run_where_the_language_is_english_or_unknown():
    _study_in("en-GB")
    evaluation = metric_evaluation_run(study_slug="likert-test", question="content", metric_names=["rouge"])
    assert evaluation.results["columns"]["rouge1_src"]["overall"]["n"] == 4


def test_evaluate_metrics_lists_every_metric_with_its_languages():
    out = io.StringIO()
    call_command("evaluate_metrics", "--list", stdout=out, stderr=io.StringIO())
    listed = {m["name"]: m for m in json.loads(out.getvalue().strip().splitlines()[-1])["metrics"]}
    assert {"meteor", "rouge", "bleu_char", "cross_encoder", "llm_rater", "bleu", "logprob"} <= set(listed)
    assert listed["meteor"]["languages"] == ["en"] and listed["bleu_char"]["languages"] == ["*"]
    assert listed["cross_encoder"]["needs_model"] is True


def test_the_admin_form_passes_by_dataset_and_the_new_metrics_options():
    from scoring.metric_evaluation.forms import MetricEvaluationForm

    _study_in("en")
    form = MetricEvaluationForm(data={"study": "likert-test", "question": "content", "metrics": ["llm_rater"],
                                      "by_dataset": "on", "device": "auto", "llm_base_url": "http://127.0.0.1:9/v1",
                                      "llm_model": "m", "cross_encoder_model": "/nowhere"})
    assert form.is_valid(), form.errors
    kwargs = form.service_kwargs()
    assert kwargs["by"] == "dataset"
    assert kwargs["options"]["llm_rater"] == {"base_url": "http://127.0.0.1:9/v1", "model": "m"}
    assert kwargs["options"]["cross_encoder"] == {"model_path": "/nowhere"}
