"""scoring.model_scoring, score runs through their doors: the admin start form with its progress bar, the REST API,
an exported benchmark, the Celery task (idempotent, failures recorded), and a real worker that consumes only the `gpu`
queue. The methods, the command and STEL's published predictions: test_stel_*.py."""
from __future__ import annotations

import csv
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from django.urls import reverse

from core.errors import ApplicationError
from core.models import Job
from scoring.celery_tasks.model_scoring import score_run_execute_task
from scoring.model_scoring.runs import score_run_start
from scoring.models import BenchmarkExport, ScoreRun


@pytest.fixture
def media(settings, tmp_path) -> Path:
    settings.MEDIA_ROOT = str(tmp_path / "media")
    return Path(settings.MEDIA_ROOT)


def contraction(shared_data: Path) -> str:
    return str(shared_data / "stel" / "quad_questions_char_contraction.tsv")


@pytest.mark.django_db
def test_admin_start_form_queues_lexical_methods_on_default_then_change_page_shows_tables(
        shared_data, admin_client, media, django_capture_on_commit_callbacks):
    start = reverse("admin:scoring_scorerun_start")
    assert admin_client.get(reverse("admin:scoring_scorerun_add")).url == start
    page = admin_client.get(start)
    assert page.status_code == 200 and b"st:minilm" in page.content
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        response = admin_client.post(start, {
            "benchmark_paths": contraction(shared_data),
            "full_paths": f"{contraction(shared_data)}\n{shared_data}/stel/quad_questions_char_substitution.tsv",
            "methods": "char3gram,uppercase,levenshtein", "compare": "uppercase,levenshtein", "seed": "5",
            "device": "cpu",
        })
    run = ScoreRun.objects.get()
    assert response.status_code == 302 and response.url == reverse("admin:scoring_scorerun_change", args=[run.pk])
    assert len(callbacks) == 1  # queued only once the transaction commits
    # lexical methods load no model: the default queue, which every install's worker serves
    assert run.job.params["queue"] == "default" and run.job.status == Job.Status.CREATED
    pending = admin_client.get(response.url)
    assert b'<progress class="job-progress"' in pending.content
    polls = b'data-job-poll="/api/v1/jobs/%d/" data-job-status="created"' % run.job_id  # core/job_poll.js reads it
    assert polls in pending.content and b"core/job_poll" in pending.content

    score_run_execute_task(run.job_id, run.pk)  # what the gpu worker runs

    run.refresh_from_db()
    job = Job.objects.get(pk=run.job_id)
    assert job.status == Job.Status.DONE and job.percent == 100.0
    assert job.result["accuracy"]["validated"]["uppercase"] == run.results["sets"]["validated"]["methods"][
        "uppercase"]["overall"]["accuracy"]
    assert run.results["sets"]["full"]["instances"] == 200
    [validated_cmp, full_cmp] = run.results["compare"]
    assert validated_cmp["set"] == "validated" and full_cmp["set"] == "full"
    with open(run.predictions_path, encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle, delimiter="\t"))
    assert len(rows) == (100 + 200) * 3
    done = admin_client.get(reverse("admin:scoring_scorerun_change", args=[run.pk]))
    assert b"score-results" in done.content and b"nbr_substitution" in done.content
    assert b"score-compare" in done.content and b"data-job-poll" not in done.content  # no more polling
    listing = admin_client.get(reverse("admin:scoring_scorerun_changelist"))
    assert b"uppercase 1.000" in listing.content  # upper-case share solves every published contraction instance


@pytest.mark.django_db
def test_admin_form_errors_store_nothing(shared_data, admin_client, media, tmp_path):
    start = reverse("admin:scoring_scorerun_start")
    bad = tmp_path / "bad.tsv"
    bad.write_text("Anchor 1\tID\nx\ty\n", encoding="utf-8")
    for data, message in [
        ({"benchmark_paths": contraction(shared_data), "methods": "char3gram,nope"}, b"unknown method"),
        ({"benchmark_paths": str(bad), "methods": "char3gram"}, b"missing column"),
        ({"benchmark_paths": "", "methods": "char3gram"}, b"choose a benchmark export"),
        ({"benchmark_paths": contraction(shared_data), "methods": f"hf:{tmp_path}/none"}, b"does not exist"),
    ]:
        response = admin_client.post(start, {"seed": "0", "device": "auto", **data})
        assert response.status_code == 200 and message in response.content, message
    assert ScoreRun.objects.count() == 0 and Job.objects.count() == 0


@pytest.mark.django_db
def test_score_an_export_through_the_api(shared_data, api, media, tmp_path, django_capture_on_commit_callbacks):
    exported = tmp_path / "export.tsv"
    shutil.copy(contraction(shared_data), exported)
    export = BenchmarkExport.objects.create(path=str(exported), format=BenchmarkExport.Format.STEL_TSV, n_rows=100)
    url = reverse("score-run-list")
    with django_capture_on_commit_callbacks(execute=False):
        response = api.post(url, {"export": export.pk, "methods": ["word_length", "punctuation"]}, format="json")
    assert response.status_code == 202, response.json()
    body = response.json()
    assert body["export"] == export.pk and body["benchmark_paths"] == [str(exported)]
    assert body["job"]["status"] == "created" and body["computed"] is False
    run = ScoreRun.objects.get(pk=body["id"])
    assert list(export.score_runs.all()) == [run]
    score_run_execute_task(run.job_id, run.pk)
    detail = api.get(reverse("score-run-detail", args=[run.pk])).json()
    assert detail["computed"] is True and detail["job"]["status"] == "done"
    assert detail["results"]["sets"]["validated"]["methods"]["word_length"]["components"]["contraction"]["n"] == 100
    assert 0.5 < detail["accuracy"]["validated"]["word_length"] <= 1.0
    listed = api.get(url).json()
    assert [r["id"] for r in listed["runs"]] == [run.pk] and "char3gram" in listed["methods"]

    ids = BenchmarkExport.objects.create(path=str(exported), format=BenchmarkExport.Format.JSONL, ids_only=True)
    wrong = api.post(url, {"export": ids.pk, "methods": ["char3gram"]}, format="json")
    assert wrong.status_code == 400 and "ids-only" in wrong.json()["error"]["message"]
    missing = api.post(url, {"export": 999999, "methods": ["char3gram"]}, format="json")
    assert missing.status_code == 404
    bad_method = api.post(url, {"benchmark_paths": [str(exported)], "methods": ["st:/no/such/model"]}, format="json")
    assert bad_method.status_code == 400 and "/no/such/model" in bad_method.json()["error"]["message"]
    assert ScoreRun.objects.count() == 1


@pytest.mark.django_db
def test_export_list_links_to_the_start_form_with_the_export_chosen(shared_data, admin_client):
    tsv = BenchmarkExport.objects.create(path=contraction(shared_data), format=BenchmarkExport.Format.STEL_TSV)
    parquet = BenchmarkExport.objects.create(path="/tmp/x.parquet", format=BenchmarkExport.Format.PARQUET)
    BenchmarkExport.objects.create(path="/tmp/ids.parquet", format=BenchmarkExport.Format.PARQUET, ids_only=True)
    listing = admin_client.get(reverse("admin:scoring_benchmarkexport_changelist")).content.decode()
    link = f'{reverse("admin:scoring_scorerun_start")}?export={tsv.pk}'
    assert listing.count("score this export") == 2 and link in listing  # any export with texts, not ids-only
    assert f'{reverse("admin:scoring_scorerun_start")}?export={parquet.pk}' in listing
    form = admin_client.get(link).content.decode()
    assert f'<option value="{tsv.pk}" selected>' in form


@pytest.mark.django_db
def test_task_is_idempotent_and_records_failures(shared_data, media, tmp_path, django_capture_on_commit_callbacks):
    copy = tmp_path / "bench.tsv"
    shutil.copy(contraction(shared_data), copy)
    with django_capture_on_commit_callbacks(execute=False):
        run = score_run_start(benchmark_paths=[str(copy)], methods="char3gram")
    score_run_execute_task(run.job_id, run.pk)
    run.refresh_from_db()
    first = run.computed_at
    score_run_execute_task(run.job_id, run.pk)  # a redelivered message: the job is done, nothing recomputed
    run.refresh_from_db()
    assert run.computed_at == first

    with django_capture_on_commit_callbacks(execute=False):
        doomed = score_run_start(benchmark_paths=[str(copy)], methods="char3gram")
    copy.unlink()  # the file disappears before the worker gets to it
    with pytest.raises(Exception, match="does not exist"):
        score_run_execute_task(doomed.job_id, doomed.pk)
    doomed.refresh_from_db()
    job = Job.objects.get(pk=doomed.job_id)
    assert job.status == Job.Status.FAILED and "does not exist" in job.error
    assert not doomed.is_computed and doomed.results == {}
    assert not Path(doomed.predictions_path).exists()


@pytest.mark.worker
@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_real_worker_consuming_only_the_gpu_queue_scores_with_minilm(shared_data, settings, tmp_path):
    import redis

    settings.MEDIA_ROOT = str(tmp_path / "media")
    broker = redis.Redis.from_url(settings.CELERY_BROKER_URL)
    broker.delete("gpu", "default")
    run = score_run_start(benchmark_paths=[contraction(shared_data)], methods="st:minilm,char3gram", device="auto")
    assert broker.llen("gpu") == 1 and broker.llen("default") == 0
    db = settings.DATABASES["default"]
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "config.settings.test",
           "DATABASE_URL": f"postgres://{db['USER']}@{db['HOST']}:{db['PORT']}/{db['NAME']}",
           "CELERY_BROKER_URL": settings.CELERY_BROKER_URL, "STYLECROWD_MEDIA_ROOT": settings.MEDIA_ROOT}
    worker = subprocess.Popen(
        [sys.executable, "-m", "celery", "-A", "config", "worker", "-Q", "gpu", "-P", "solo", "-c", "1",
         "--without-gossip", "--without-mingle", "--without-heartbeat", "-l", "WARNING"],
        cwd=settings.BASE_DIR, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
    )
    seen_progress = set()
    try:
        deadline = time.monotonic() + 240
        while time.monotonic() < deadline:
            job = Job.objects.get(pk=run.job_id)
            seen_progress.add(job.progress_done)
            if job.status in (Job.Status.DONE, Job.Status.FAILED):
                break
            time.sleep(0.3)
    finally:
        worker.terminate()
        output = worker.communicate(timeout=30)[0].decode(errors="replace")
    job = Job.objects.get(pk=run.job_id)
    assert job.status == Job.Status.DONE, (job.error, output[-2000:])
    assert job.progress_total == 2000 and job.progress_done == 2000  # 1000 progress units per method
    run.refresh_from_db()
    assert run.results["device"] == "auto" and run.is_computed
    assert 0.6 < run.results["sets"]["validated"]["methods"]["st:minilm"]["overall"]["accuracy"] <= 1.0
    assert Path(run.predictions_path).is_file()


@pytest.mark.django_db
def test_command_background_stores_a_run_on_the_queue_its_methods_need(shared_data, media, monkeypatch,
                                                           django_capture_on_commit_callbacks):
    import io
    import json

    from django.core.management import call_command

    monkeypatch.chdir(shared_data)  # a relative path is stored absolute, for a worker in another directory
    out = io.StringIO()
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        call_command("score_stel", "stel/quad_questions_char_contraction.tsv", methods="uppercase", background=True,
                     json=True, stdout=out, stderr=io.StringIO())
    summary = json.loads(out.getvalue().strip().splitlines()[-1])
    assert summary["ok"] is True and summary["queue"] == "default" and summary["computed"] is False
    assert len(callbacks) == 1
    run = ScoreRun.objects.get(pk=summary["score_run"])
    assert run.benchmark_paths == [str(Path(contraction(shared_data)).resolve())] and run.created_by == "score_stel"
    score_run_execute_task(summary["job"], run.pk)
    run.refresh_from_db()
    assert run.results["sets"]["validated"]["methods"]["uppercase"]["overall"]["accuracy"] == 1.0


@pytest.mark.django_db
def test_every_export_format_with_texts_is_scored_alike(media, tmp_path, admin_client,
                                                         django_capture_on_commit_callbacks):
    """A score run reads any export of a benchmark (STEL TSV, JSONL, Parquet, a hub folder: their rows), offered on
    the start form; each gives the same accuracy. Before: STEL TSV exports only."""
    from scoring.export.services import benchmark_export
    from tests.factories import annotated_study

    study, _ = annotated_study(answers=[["S2-S1"] * 5, ["S1-S2"] * 5, ["S2-S1"] * 4 + ["S1-S2"]])
    exports = {fmt: benchmark_export(fmt=fmt, out=tmp_path / f"bench-{fmt}", study_slug=study.slug, status="all")
               for fmt in ("stel-tsv", "jsonl", "parquet", "hub")}
    form = admin_client.get(reverse("admin:scoring_scorerun_start")).content.decode()
    for export in exports.values():
        assert f'<option value="{export.pk}">' in form
    accuracy = {}
    for fmt, export in exports.items():
        with django_capture_on_commit_callbacks(execute=False):
            run = score_run_start(export_id=export.pk, methods="char3gram,punctuation")
        score_run_execute_task(run.job_id, run.pk)
        run.refresh_from_db()
        methods = run.results["sets"]["validated"]["methods"]
        assert methods["char3gram"]["overall"]["n"] == 3, fmt
        accuracy[fmt] = {spec: table["overall"]["accuracy"] for spec, table in methods.items()}
    assert all(value == accuracy["stel-tsv"] for value in accuracy.values()), accuracy


@pytest.mark.django_db
def test_the_start_page_names_the_queue_the_methods_really_use(admin_client, shared_data, media,
                                                               django_capture_on_commit_callbacks):
    start = reverse("admin:scoring_scorerun_start")
    lexical = admin_client.get(start, {"methods": "char3gram,punctuation"}).content.decode()
    said = " ".join(lexical.split('id="score-queue">', 1)[1].split("</p>", 1)[0].split())
    assert "With these methods (lexical only, no model) the run goes to the <code>default</code> Celery queue" in said
    assert "goes to the <code>gpu</code> Celery queue (a method loads a model)" not in said
    model = " ".join(admin_client.get(start).content.decode().split())  # the default methods include st:minilm
    assert "With these methods the run goes to the <code>gpu</code> Celery queue (a method loads a model)" in model
    with django_capture_on_commit_callbacks(execute=False):
        admin_client.post(start, {"benchmark_paths": contraction(shared_data), "methods": "char3gram",
                                  "seed": "0", "device": "cpu"})
    assert ScoreRun.objects.get().job.params["queue"] == "default"


@pytest.mark.django_db
@pytest.mark.parametrize("given", ["/proc/self/environ", "/proc/self/status"])
def test_a_refused_path_is_named_as_the_researcher_gave_it_not_resolved(api, given: str) -> None:
    """A /proc/self/… path resolves to /proc/<pid>/…: echoing the resolved path would tell the worker's pid."""
    response = api.post("/api/v1/score-runs/", {"benchmark_paths": [given], "methods": ["char3gram"]}, format="json")
    error = response.json()["error"]
    assert response.status_code == 400 and error["code"] == "path_not_allowed"
    resolved = str(Path(given).resolve())
    assert f"'{given}'" in error["message"] and error["details"]["path"] == given
    assert resolved not in str(error) and f"/proc/{os.getpid()}" not in str(error)
    assert not ScoreRun.objects.exists() and not Job.objects.exists()


@pytest.mark.django_db
def test_a_run_on_an_export_of_a_french_study_refuses_an_english_only_method(shared_data, media, tmp_path):
    from tests.factories import CorpusFactory, StudyItemFactory, TaskInstanceFactory  # the study side only

    study = StudyItemFactory(instance=TaskInstanceFactory(corpus=CorpusFactory(language="fr")),
                             study__language="fr").study
    exported = tmp_path / "export.tsv"
    shutil.copy(contraction(shared_data), exported)
    export = BenchmarkExport.objects.create(path=str(exported), format=BenchmarkExport.Format.STEL_TSV, study=study)
    with pytest.raises(ApplicationError) as refused:
        score_run_start(export_id=export.pk, methods="char3gram,st:minilm")
    assert refused.value.code == "unsupported_language" and "this benchmark's texts are fr" in refused.value.message
    assert not ScoreRun.objects.exists()
    run = score_run_start(export_id=export.pk, methods="char3gram,punctuation")
    assert run.methods == ["char3gram", "punctuation"]
    with pytest.raises(ApplicationError, match="method 'pos' supports en only"):
        score_run_start(benchmark_paths=[str(exported)], methods="pos", language="de", any_path=True)
