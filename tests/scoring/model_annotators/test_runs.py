"""Model annotators through the OpenAI-compatible back-end, against a fake endpoint over real HTTP: the run and its
doors (CLI, API, admin), every order of display, the cache, tokens and cost, the stop button, bad input, and the
proof that a model run changes none of the crowd's figures."""
from __future__ import annotations

import io
import json
import threading
from decimal import Decimal

import numpy as np
import pytest
from django.core.management import CommandError, call_command
from django.test import Client
from django.urls import reverse
from rest_framework.test import APIClient

from annotation.models import Batch, Participant, Reservation, Response, StudyItem
from annotation.selectors import participant_recommendations, study_progress
from annotation.services.exports import decisions_serialize, responses_serialize
from core.models import Job
from scoring.agreement.runs import agreement_run_compute, agreement_run_start
from scoring.agreement.stats.votes import first_k_responses, votes_compute
from scoring.model_annotators.runs import model_run_compute, model_run_start, model_run_stop
from scoring.models import ModelAnswer, ModelReplyCache, ModelRun
from tests import factories as f
from tests.annotation.helpers import Participant as Player
from tests.annotation.helpers import make_study
from tests.helpers import assert_api_error
from tests.scoring.fake_openai import FakeOpenAI, first_choice

pytestmark = pytest.mark.django_db


def _cli(*args: str) -> dict:
    out = io.StringIO()
    call_command("annotate_with_model", *args, stdout=out)
    return json.loads(out.getvalue().strip().splitlines()[-1])


def _cli_error(*args: str) -> dict:
    out = io.StringIO()
    with pytest.raises(CommandError):
        call_command("annotate_with_model", *args, stdout=out)
    return json.loads(out.getvalue().strip().splitlines()[-1])


def _nothing_stored() -> None:
    assert not ModelRun.objects.exists() and not ModelAnswer.objects.exists() and not Job.objects.exists()


@pytest.mark.slow  # a second or more (a model run over HTTP, or the whole crowd flow)
def test_cli_oracle_answers_every_order_and_rerun_costs_nothing():
    study, items = f.annotated_study(answers=[["S2-S1"] * 3, ["S1-S2", "S2-S1", "S2-S1"]])
    with FakeOpenAI() as fake:
        summary = _cli("--study", study.slug, "--base-url", fake.base_url, "--model", "fake-model",
                       "--price-input", "0.5", "--price-output", "2", "--json")
        assert summary["ok"] and (summary["items"], summary["asks"], summary["answered"]) == (2, 8, 8)
        assert summary["accuracy"] == 1.0 and summary["order_sensitive_share"] == 0.0
        assert summary["requests"] == 8 and summary["cache_hits"] == 0 and summary["completion_tokens"] == 56
        prompt_tokens = sum(sum(len(m["content"].split()) for m in r["body"]["messages"])
                            for r in fake.chat_requests())
        assert summary["prompt_tokens"] == prompt_tokens
        cost = (Decimal(prompt_tokens) * Decimal("0.5") + 56 * 2) / 1000
        assert summary["cost"] == pytest.approx(float(cost))
        # every order of a quadruple: S1/S2 as stored and swapped, anchors as stored and swapped
        orders = set(ModelAnswer.objects.filter(study_item=items[0]).values_list("order", flat=True))
        assert orders == {"s12-a12", "s21-a12", "s12-a21", "s21-a21"}
        assert set(ModelAnswer.objects.values_list("answer", flat=True)) == {"S2-S1"}
        assert set(ModelAnswer.objects.values_list("displayed_answer", flat=True)) == {"S1-S2", "S2-S1"}
        # the same questions again: all from the cache, no request, no token
        again = _cli("--study", study.slug, "--base-url", fake.base_url, "--model", "fake-model", "--json")
        assert (again["cache_hits"], again["requests"], again["prompt_tokens"], again["cost"]) == (8, 0, 0, 0.0)
        assert len(fake.chat_requests()) == 8 and ModelReplyCache.objects.count() == 8


def test_prompt_is_the_study_instructions_and_the_item_as_shown_in_that_order():
    from annotation.models import PracticeItem

    study, items = f.annotated_study(answers=[["S2-S1"]])
    study.task_description = "Match the sentences to the anchors by style.\n\nKeys: press 1 for S1-S2."
    study.save()
    PracticeItem.objects.create(study=study, anchor_1="yo", anchor_2="Hello.", sentence_1="Goodbye.",
                                sentence_2="cya", correct_answer="S2-S1", explanation="cya is casual like yo.")
    inst = items[0].instance
    with FakeOpenAI() as fake:
        _cli("--study", study.slug, "--base-url", fake.base_url, "--model", "fake-model", "--json")
        requests = fake.chat_requests()
    system = requests[0]["body"]["messages"][0]["content"]
    assert "Match the sentences to the anchors by style." in system and "Keys:" not in system
    assert "Practice question 1\nAnchors\nA1: yo\nA2: Hello." in system and "Answer: S2-S1. cya is casual" in system
    users = {r["body"]["messages"][1]["content"] for r in requests}
    assert len(users) == 4  # four orders, four different displays
    as_stored = (f"Anchors\nA1: {inst.anchor_1}\nA2: {inst.anchor_2}\nSentences\nS1: {inst.sentence_1}\n"
                 f"S2: {inst.sentence_2}\n\nWhich sentence matches each anchor in style?\n"
                 "- S1-S2: S1 goes with A1, S2 goes with A2\n- S2-S1: S2 goes with A1, S1 goes with A2\n\n"
                 "Answer with exactly one of: S1-S2, S2-S1.")
    assert as_stored in users
    both_swapped = (f"Anchors\nA1: {inst.anchor_2}\nA2: {inst.anchor_1}\nSentences\nS1: {inst.sentence_2}\n"
                    f"S2: {inst.sentence_1}\n")
    assert any(u.startswith(both_swapped) for u in users)
    shown = ModelAnswer.objects.get(order="s21-a12").shown
    assert shown["texts"]["sentence_1"] == inst.sentence_2 and shown["swapped"] is True
    assert shown["sentence_order"] == ["S2", "S1"] and shown["anchors_swapped"] is False


@pytest.mark.slow  # a second or more (a model run over HTTP, or the whole crowd flow)
def test_position_biased_model_is_order_sensitive_everywhere():
    study, _ = f.annotated_study(answers=[["S2-S1"] * 3, ["S1-S2"] * 3])
    with FakeOpenAI(first_choice) as fake:
        summary = _cli("--study", study.slug, "--base-url", fake.base_url, "--model", "fake-model", "--json")
    assert summary["order_sensitive_share"] == 1.0 and summary["accuracy"] == 0.5
    run = ModelRun.objects.get()
    agreement = agreement_run_compute(run_id=agreement_run_start(study=study, resamples=50, enqueue=False).pk)
    overall = agreement.result["models"]["runs"][0]["overall"]
    assert overall["first_option_share"] == 1.0 and overall["order_sensitive_items"] == 2
    assert agreement.result["models"]["runs"][0]["model_run"] == run.pk


def test_faults_are_recorded_as_no_answer_and_counted(settings):
    study, _ = f.annotated_study(answers=[["S2-S1"] * 3, ["S2-S1"] * 3])
    with FakeOpenAI() as fake:
        # question 1: refused twice; 2: malformed, then a 429 (retried after back-off), then answered;
        # 3: outside the choices twice; the rest answered at once
        fake.faults.extend(["refusal", "refusal", "malformed", "429", "", "out_of_choice", "out_of_choice"])
        summary = _cli("--study", study.slug, "--base-url", fake.base_url, "--model", "fake-model",
                       "--concurrency", "1", "--backoff", "0", "--json")
    assert summary["by_status"] == {"answered": 5, "answered_on_retry": 1, "out_of_choice": 1, "refused": 1}
    assert summary["no_answer"] == 2 and summary["requests"] == 12
    refused = ModelAnswer.objects.get(status="refused")
    assert refused.answer == "" and refused.is_correct is False and "can't help" in refused.raw
    assert summary["accuracy"] == pytest.approx(6 / 8) and summary["accuracy_answered"] == 1.0


@pytest.mark.slow  # a second or more (a model run over HTTP, or the whole crowd flow)
def test_concurrency_limit_is_respected():
    study, _ = f.annotated_study(answers=[["S2-S1"]] * 6)
    active, peak, lock = [0], [0], threading.Lock()

    def slow(messages, body):
        import time

        with lock:
            active[0] += 1
            peak[0] = max(peak[0], active[0])
        time.sleep(0.05)
        with lock:
            active[0] -= 1
        return "S2-S1"

    with FakeOpenAI(slow) as fake:
        summary = _cli("--study", study.slug, "--base-url", fake.base_url, "--model", "fake-model",
                       "--concurrency", "3", "--json")
    assert summary["answered"] == 24 and 2 <= peak[0] <= 3


def test_stop_before_it_runs_sends_nothing_and_keeps_the_run():
    study, _ = f.annotated_study(answers=[["S2-S1"]] * 3)
    with FakeOpenAI() as fake:
        run = model_run_start(study=study, backend="openai", base_url=fake.base_url, model="fake-model",
                              enqueue=False)
        model_run_stop(run=run)
        run = model_run_compute(run_id=run.pk)
        assert fake.chat_requests() == []
    assert run.stopped and run.is_computed and run.n_answered == 0
    with pytest.raises(Exception) as caught:
        model_run_stop(run=run)
    assert getattr(caught.value, "code", "") == "finished"


@pytest.mark.django_db(transaction=True)
@pytest.mark.slow
def test_stop_button_mid_run_keeps_the_answers_in():
    study, _ = f.annotated_study(answers=[["S2-S1"]] * 10)
    stop_after = 5
    seen = [0]

    def stopping(messages, body):
        seen[0] += 1
        if seen[0] == stop_after:  # the stop button, pressed from another connection while the run goes
            ModelRun.objects.update(stop_requested=True)
        return "S2-S1"

    with FakeOpenAI(stopping) as fake:
        run = model_run_start(study=study, backend="openai", base_url=fake.base_url, model="fake-model",
                              concurrency=1, enqueue=False)
        import scoring.model_annotators.runs as runs

        runs.STOP_POLL_SECONDS, before = 0.0, runs.STOP_POLL_SECONDS
        try:
            run = model_run_compute(run_id=run.pk)
        finally:
            runs.STOP_POLL_SECONDS = before
    assert run.stopped and stop_after <= run.n_answered <= stop_after + 1 < run.n_asks == 40
    assert ModelAnswer.objects.filter(run=run).count() == run.n_answered


@pytest.mark.parametrize("args, code", [
    (["--backend", "telepathy"], "unknown_backend"),
    (["--base-url", "http://127.0.0.1:9/v1", "--model", "m", "--retries", "0", "--timeout", "1"],
     "model_endpoint_unreachable"),
    (["--base-url", "not a url", "--model", "m"], "invalid_base_url"),
    (["--backend", "local", "--model-dir", "/nonexistent/dir"], "invalid_model_dir"),
    (["--backend", "local"], "missing_model_dir"),
    (["--base-url", "http://127.0.0.1:9/v1"], "missing_model"),
    (["--base-url", "http://127.0.0.1:9/v1", "--model", "m", "--concurrency", "0"], "invalid_option"),
])
def test_bad_input_is_a_clear_error_and_stores_nothing(args, code):
    study, _ = f.annotated_study(answers=[["S2-S1"]])
    Job.objects.all().delete()
    error = _cli_error("--study", study.slug, *args)["error"]
    assert error["code"] == code, error
    _nothing_stored()


def test_study_without_items_and_rewrite_studies_are_refused():
    empty = f.StudyFactory()
    assert _cli_error("--study", empty.slug, "--base-url", "http://127.0.0.1:9/v1", "--model", "m")["error"][
        "code"] == "no_items"
    rewrite = f.StudyFactory(item_kind="rewrite")
    error = _cli_error("--study", rewrite.slug, "--base-url", "http://127.0.0.1:9/v1", "--model", "m")["error"]
    assert error["code"] == "unsupported_kind" and "rewrite" in error["message"]
    assert _cli_error("--study", "nope", "--model", "m")["error"]["code"] == "unknown_study"
    _nothing_stored()


def test_local_model_dir_outside_data_folders_is_refused_by_the_api(api):
    study, _ = f.annotated_study(answers=[["S2-S1"]])
    response = api.post("/api/v1/model-runs/", {"study": study.slug, "backend": "local",
                                                "model_dir": "/usr/share"}, format="json")
    assert response.status_code == 400 and "outside the data folders" in response.json()["error"]["message"]
    _nothing_stored()


def test_api_starts_a_run_as_a_202_job_and_reads_it(api):
    study, _ = f.annotated_study(answers=[["S2-S1"] * 3])
    with FakeOpenAI() as fake:
        response = api.post("/api/v1/model-runs/", {"study": study.slug, "backend": "openai",
                                                    "base_url": fake.base_url, "model": "fake-model",
                                                    "label": "fake 7B"}, format="json")
        assert response.status_code == 202, response.content
        body = response.json()
        assert body["job"]["kind"] == "model_annotation" and body["job"]["status"] == "created"
        assert body["label"] == "fake 7B" and body["computed"] is False
        job = Job.objects.get(pk=body["job"]["id"])
        assert job.queue == "default" and job.task_name == "scoring.model_annotators.run"
        model_run_compute(run_id=body["model_run"], job_id=job.pk)  # what the worker runs
    detail = api.get(f"/api/v1/model-runs/{body['model_run']}/").json()
    assert detail["computed"] and detail["answered"] == 4 and detail["accuracy"] == 1.0
    answers = api.get(f"/api/v1/model-runs/{body['model_run']}/answers/?verdicts=1").json()
    assert len(answers["answers"]) == 4 and {a["answer"] for a in answers["answers"]} == {"S2-S1"}
    assert answers["verdicts"] == [{"item": study.items.get().external_id, "question": "", "orders": 4,
                                    "answered": 4, "order_sensitive": False, "consistent_answer": "S2-S1"}]
    assert api.get(f"/api/v1/model-runs/?study={study.slug}").json()["runs"][0]["model_run"] == body["model_run"]
    assert_api_error(api.post(f"/api/v1/model-runs/{body['model_run']}/stop/"), code="finished", status=409)


def test_api_bad_input(api):
    study, _ = f.annotated_study(answers=[["S2-S1"]])
    assert_api_error(api.post("/api/v1/model-runs/", {"study": study.slug, "backend": "nope"}, format="json"),
                     code="unknown_backend", status=400)
    assert_api_error(api.post("/api/v1/model-runs/", {"study": "missing", "backend": "openai"}, format="json"),
                     code="unknown_study", status=404)
    error = assert_api_error(api.post("/api/v1/model-runs/", {
        "study": study.slug, "backend": "openai", "base_url": "http://127.0.0.1:9/v1", "model": "m",
        "max_retries": 0, "timeout": 1}, format="json"), code="model_endpoint_unreachable", status=502)
    assert error["details"] == {"field": "base_url"}
    _nothing_stored()


@pytest.mark.slow  # a second or more (a model run over HTTP, or the whole crowd flow)
def test_admin_start_form_stop_and_guide(admin_client: Client):
    study = make_study(n_instances=2, k=5, m=3, adaptive=True, slug="adm")
    with FakeOpenAI() as fake:
        response = admin_client.post(reverse("admin:scoring_modelrun_start"), {
            "study": "adm", "backend": "openai", "base_url": fake.base_url, "model": "fake-model",
            "concurrency": 2, "timeout": 30, "max_retries": 1, "backoff": 0, "structured": "on", "max_tokens": 32,
            "device": "auto", "price_input": 0, "price_output": 0})
        assert response.status_code == 302, response.content.decode()[:2000]
        run = ModelRun.objects.get()
        page = admin_client.get(reverse("admin:scoring_modelrun_change", args=[run.pk])).content.decode()
        assert "Stop the run" in page and 'id="model-run-stop"' in page
        admin_client.post(reverse("admin:scoring_modelrun_stop", args=[run.pk]))
        run.refresh_from_db()
        assert run.stop_requested
        ModelRun.objects.filter(pk=run.pk).update(stop_requested=False)
        model_run_compute(run_id=run.pk)
    response = admin_client.post(reverse("admin:scoring_modelrun_guide", args=[run.pk]), {"stop_after": "2"})
    assert response.status_code == 302
    study.refresh_from_db()
    assert study.guide_stop_after == 2 and study.guide_source.startswith(f"model run #{run.pk} ")
    assert set(StudyItem.objects.filter(study=study).values_list("guide_answer", flat=True)) == {"S2-S1"}
    bad = admin_client.post(reverse("admin:scoring_modelrun_start"), {"study": "adm", "backend": "openai",
                                                                       "base_url": "x", "model": "m",
                                                                       "concurrency": 1, "timeout": 5,
                                                                       "max_retries": 0, "backoff": 0,
                                                                       "max_tokens": 8, "device": "auto",
                                                                       "price_input": 0, "price_output": 0})
    assert bad.status_code == 200 and "is not an http(s) URL" in bad.content.decode()
    assert ModelRun.objects.count() == 1


def _human_figures(study) -> dict:
    run = agreement_run_compute(run_id=agreement_run_start(study=study, seed=3, resamples=200, enqueue=False).pk)
    result = {key: value for key, value in run.result.items() if key != "models"}
    return {
        "agreement": result, "progress": study_progress(study=study),
        "recommendations": participant_recommendations(study=study),
        "responses_csv": "".join(responses_serialize(study=study, fmt="csv")),
        "decisions": decisions_serialize(study=study, fmt="prolific"),
        "counts": (Participant.objects.count(), Response.objects.count(), Reservation.objects.count(),
                   Batch.objects.count()),
        "closed": list(StudyItem.objects.filter(study=study).order_by("pk").values_list("is_closed", "fill")),
    }


@pytest.mark.slow  # a second or more (a model run over HTTP, or the whole crowd flow)
def test_a_model_run_changes_none_of_the_human_figures():
    """A study filled by participants over the API; every human figure before and after two model runs (one that
    agrees with the majority, one that disagrees in every other order) is identical, and the model's answers sit
    only in their own table."""
    study = make_study(n_instances=4, k=3, m=2, per_batch=4, slug="iso")
    client = APIClient()
    for n, correct in enumerate([True, True, False]):
        player = Player(client, study.slug, f"P{n}")
        player.start()
        player.consent()
        player.play(correct=correct)
    before = _human_figures(study)
    with FakeOpenAI() as fake:
        _cli("--study", study.slug, "--base-url", fake.base_url, "--model", "fake-model", "--json")
    with FakeOpenAI(first_choice) as fake:
        _cli("--study", study.slug, "--base-url", fake.base_url, "--model", "fake-model", "--label", "biased",
             "--json")
    after = _human_figures(study)
    assert after == before
    assert ModelAnswer.objects.count() == 2 * 4 * 4
    latest = study.agreement_runs.order_by("-pk").first() if hasattr(study, "agreement_runs") else None
    from scoring.models import AgreementRun

    latest = AgreementRun.objects.filter(study=study).order_by("-pk").first()
    assert [m["label"] for m in latest.result["models"]["runs"]] == ["fake-model", "biased"]


@pytest.mark.slow  # a second or more (a model run over HTTP, or the whole crowd flow)
def test_comparison_figures_are_the_libraries_own():
    """kappa with the human majority is scikit-learn's on the (order, majority) pairs; alpha with the model is
    krippendorff's with the model as one more rater."""
    import krippendorff
    from sklearn.metrics import cohen_kappa_score

    answers = [["S2-S1"] * 3, ["S2-S1", "S2-S1", "S1-S2"], ["S1-S2", "S1-S2", "S2-S1"], ["S1-S2"] * 3,
               ["S2-S1", "S1-S2", "S1-S2"]]
    study, items = f.annotated_study(answers=answers)
    StudyItem.objects.filter(study=study).update(correct_answer="S2-S1")
    with FakeOpenAI(first_choice) as fake:
        _cli("--study", study.slug, "--base-url", fake.base_url, "--model", "fake-model", "--json")
    run = agreement_run_compute(run_id=agreement_run_start(study=study, k=3, m=2, resamples=100,
                                                           enqueue=False).pk)
    overall = run.result["models"]["runs"][0]["overall"]
    majority = {item.pk: max(set(votes), key=votes.count) for item, votes in zip(items, answers, strict=True)}
    model = list(ModelAnswer.objects.order_by("study_item_id", "order").values_list("study_item_id", "answer"))
    expected = cohen_kappa_score([a for _, a in model], [majority[i] for i, _ in model])
    assert overall["kappa_with_majority"] == pytest.approx(expected)
    low, high = overall["kappa_with_majority_ci"]["low"], overall["kappa_with_majority_ci"]["high"]
    assert low <= overall["kappa_with_majority"] <= high
    first = dict(ModelAnswer.objects.filter(order="s12-a12").values_list("study_item_id", "answer"))
    codes = {"S1-S2": 0, "S2-S1": 1}
    crowd = np.array([[codes[v[r]] for v in answers] for r in range(3)], dtype=float)
    with_model = np.vstack([crowd, [codes[first[item.pk]] for item in items]])
    assert overall["alpha_crowd"] == pytest.approx(krippendorff.alpha(crowd, level_of_measurement="nominal"))
    assert overall["alpha_with_model"] == pytest.approx(krippendorff.alpha(with_model,
                                                                          level_of_measurement="nominal"))
    assert overall["accuracy"] == pytest.approx(0.5) and overall["order_sensitive_share"] == 1.0
    # the split items (majority of 2 of 3) with what the model said in every order
    split = run.result["models"]["runs"][0]["split_items"]
    assert {s["external_id"] for s in split} == {items[i].external_id for i in (1, 2, 4)}
    assert set(split[0]["model"]) == {"s12-a12", "s21-a12", "s12-a21", "s21-a21"}
    shares = {p["correct_votes"]: p["items"] for p in run.result["models"]["runs"][0]["by_vote_share"]}
    assert shares == {0: 1, 1: 2, 2: 1, 3: 1}
    first_k = first_k_responses(responses=__import__("scoring.agreement.selectors", fromlist=["x"]).responses_frame(
        study_id=study.pk), k=3)
    assert votes_compute(first_k=first_k, items=__import__("scoring.agreement.selectors", fromlist=["x"])
                         .items_frame(study_id=study.pk), k=3, m=2).per_item["n_used"].sum() == 15


@pytest.mark.slow  # a second or more (a model run over HTTP, or the whole crowd flow)
def test_dashboard_and_dataset_card_show_the_models(admin_client: Client, tmp_path):
    from scoring.export.services import benchmark_export
    from tasks.models import TaskInstance

    study, items = f.annotated_study(answers=[["S2-S1"] * 3, ["S2-S1", "S2-S1", "S1-S2"]],
                                     study=f.StudyFactory(annotators_per_item=3, min_correct=2))
    with FakeOpenAI() as fake:
        _cli("--study", study.slug, "--base-url", fake.base_url, "--model", "fake-model", "--label", "oracle",
             "--json")
    run = agreement_run_compute(run_id=agreement_run_start(study=study, k=3, m=2, resamples=50, enqueue=False).pk)
    html = admin_client.get(reverse("admin:scoring_agreement_dashboard", args=[run.pk])).content.decode()
    assert 'id="model-table"' in html and "oracle" in html
    assert reverse("admin:scoring_agreement_plot", args=[run.pk, "models", "svg"]) in html
    svg = admin_client.get(reverse("admin:scoring_agreement_plot", args=[run.pk, "models", "svg"]))
    assert svg.status_code == 200 and b"oracle" in svg.content
    TaskInstance.objects.filter(pk=items[0].instance_id).update(status="validated")
    export = benchmark_export(fmt="stel-tsv", out=tmp_path / "b.tsv", study_slug=study.slug)
    card = json.loads((tmp_path / "b.card.json").read_text())
    assert card["models"][0]["label"] == "oracle" and card["models"][0]["accuracy"] == 1.0
    assert card["models"][0]["accuracy_validated"] == 1.0 and card["models"][0]["asks"] == 8
    assert card["models"][0]["kappa_with_majority"] is not None or card["models"][0]["agreement_source"]
    assert "## Model annotators" in (tmp_path / "b.card.md").read_text() and export.n_rows == 2
    # the exported file itself holds human votes only
    assert "oracle" not in (tmp_path / "b.tsv").read_text()


@pytest.mark.slow  # a second or more (a model run over HTTP, or the whole crowd flow)
def test_a_position_biased_model_is_flagged_in_words_at_every_door_and_appears_without_recomputing(
        admin_client: Client, api):
    """Before: "order-sensitive 1.000, first option 1.000" with no warning, and the dashboard of an agreement run
    computed before the model run finished needed "compute again" to show it."""
    study, _ = f.annotated_study(answers=[["S2-S1"] * 3, ["S1-S2"] * 3],
                                 study=f.StudyFactory(annotators_per_item=3, min_correct=2))
    agreement = agreement_run_compute(run_id=agreement_run_start(study=study, k=3, m=2, resamples=50,
                                                                 enqueue=False).pk)
    assert "models" not in agreement.result
    said = "picks the first option in 100 % of items: position bias"
    with FakeOpenAI(first_choice) as fake:
        out = io.StringIO()
        call_command("annotate_with_model", "--study", study.slug, "--base-url", fake.base_url, "--model",
                     "fake-model", "--label", "first-picker", stdout=out)
    printed = out.getvalue()
    assert f"Warning: first-picker {said}" in printed  # the CLI's words
    summary = json.loads(printed.strip().splitlines()[-1])  # and its JSON summary line
    assert summary["first_option_share"] == 1.0 and any(said in w for w in summary["warnings"])
    assert any("order-sensitive" in w for w in summary["warnings"])
    run = ModelRun.objects.get()
    body = api.get(reverse("model-run-detail", args=[run.pk])).json()
    assert any(said in w for w in body["warnings"])
    page = admin_client.get(reverse("admin:scoring_modelrun_change", args=[run.pk])).content.decode()
    assert said in page
    dashboard = admin_client.get(reverse("admin:scoring_agreement_dashboard", args=[agreement.pk])).content.decode()
    assert 'id="model-table"' in dashboard and "first-picker" in dashboard  # no "compute again" needed
    assert f'id="model-warnings-{run.pk}"' in dashboard and said in dashboard
    svg = admin_client.get(reverse("admin:scoring_agreement_plot", args=[agreement.pk, "models", "svg"]))
    assert svg.status_code == 200 and b"first-picker" in svg.content
    agreement.refresh_from_db()
    assert agreement.result["models"]["runs"][0]["model_run"] == run.pk


def test_order_warnings_thresholds():
    from scoring.model_annotators.selectors import order_warnings

    assert order_warnings({"first_option_share": 0.5, "order_sensitive_share": 0.1}) == []
    assert order_warnings({"first_option_share": None, "order_sensitive_share": None}) == []
    (warning,) = order_warnings({"first_option_share": 0.85, "order_sensitive_share": 0.2})
    assert warning.startswith("picks the first option in 85 % of items: position bias")
