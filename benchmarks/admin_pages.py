"""The admin's heaviest pages with 10,000 responses: the agreement dashboard (its HTML and the four plots
the browser then loads), a metric evaluation's page (with its plot) and the responses changelist, timed in-process
with Django's test client on a fresh demo database (SQLite, eager Celery, as `make demo`).

Usage (any checkout; writes only the SQLite file it is given):
  DJANGO_SETTINGS_MODULE=config.settings.local DATABASE_URL=sqlite:////tmp/pages.sqlite3 CELERY_BROKER_URL= \
      .venv/bin/python benchmarks/admin_pages.py --items 2000 --k 5 --repeat 3
Prints one JSON line: seconds per page, the first view (cold) and the median of the next views (warm).
"""
from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.local")

import django  # noqa: E402

django.setup()

import numpy as np  # noqa: E402
from django.conf import settings  # noqa: E402
from django.contrib.auth.models import User  # noqa: E402
from django.core.management import call_command  # noqa: E402
from django.test import Client  # noqa: E402
from django.test.utils import override_settings  # noqa: E402
from django.urls import reverse  # noqa: E402

from annotation.models import Participant, Response, Study, StudyItem  # noqa: E402
from scoring.agreement.dashboard import PLOTS  # noqa: E402
from tasks.models import Corpus, Order, Setup, StyleComponent, TaskInstance  # noqa: E402


def seed(items: int, k: int) -> Study:
    component = StyleComponent.objects.get(name="formality")
    corpus = Corpus.objects.create(name="bench", component=component, import_format="pairs")
    study = Study.objects.create(slug="bench", annotators_per_item=k, min_correct=k // 2 + 1)
    instances = TaskInstance.objects.bulk_create([
        TaskInstance(stel_id=f"QQ_b-{i}", setup=Setup.QUADRUPLE, component=component, corpus=corpus, position=i,
                     family=f"b-{i}", anchor_1="gonna be late lol", anchor_2="I am going to be late.",
                     sentence_1="I would appreciate your help.", sentence_2="pls help me out", anchor_1_style=1,
                     anchor_2_style=2, sentence_1_style=2, sentence_2_style=1, correct_order=Order.S2_S1)
        for i in range(items)])
    rows = StudyItem.objects.bulk_create([
        StudyItem(study=study, instance=inst, external_id=inst.stel_id, position=i, kind="quadruple",
                  component=component, family=inst.family, correct_answer="S2-S1")
        for i, inst in enumerate(instances)])
    people = Participant.objects.bulk_create([
        Participant(study=study, platform="prolific", external_id=f"P{j:04d}") for j in range(200)])
    rng = np.random.default_rng(7)
    base = dt.datetime(2026, 11, 1, tzinfo=dt.UTC)
    responses = []
    for i, item in enumerate(rows):
        for r, person in enumerate(rng.choice(people, size=k, replace=False)):
            answer = "S2-S1" if rng.random() < 0.8 else "S1-S2"
            responses.append(Response(study=study, participant=person, study_item=item, answer=answer,
                                      is_correct=answer == "S2-S1", seconds=float(rng.integers(3, 30)),
                                      answered_at=base + dt.timedelta(minutes=i, seconds=r)))
    Response.objects.bulk_create(responses, batch_size=5000)
    return study


def timed(client: Client, urls: list[str], repeat: int) -> dict[str, float]:
    def once() -> float:
        start = time.perf_counter()
        for url in urls:
            response = client.get(url)
            assert response.status_code == 200, (url, response.status_code)
            if hasattr(response, "streaming_content"):
                b"".join(response.streaming_content)
        return time.perf_counter() - start

    cold = once()
    warm = [once() for _ in range(repeat)]
    return {"cold_s": round(cold, 3), "warm_s": round(statistics.median(warm), 3)}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--items", type=int, default=2000)
    parser.add_argument("--k", type=int, default=5)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    call_command("migrate", verbosity=0)
    media = tempfile.mkdtemp(prefix="pages-media-")
    with override_settings(MEDIA_ROOT=media, ALLOWED_HOSTS=["testserver"]):
        from scoring.agreement.runs import agreement_run_compute, agreement_run_start
        from scoring.metric_evaluation.demo import likert_demo_load
        from scoring.metric_evaluation.services import metric_evaluation_start

        study = seed(args.items, args.k)
        started = time.perf_counter()
        run = agreement_run_start(study=study, seed=1, resamples=200, created_by="bench")  # eager: runs now
        run = agreement_run_compute(run_id=run.pk)
        compute_s = time.perf_counter() - started
        likert_demo_load()
        evaluation = metric_evaluation_start(study_slug="likert-demo", question="content_preservation",
                                             metric_names=["bleu", "chrf", "levenshtein"], by="style")
        evaluation.refresh_from_db()
        User.objects.create_superuser("bench", password="bench-pw")
        client = Client()
        client.force_login(User.objects.get(username="bench"))
        dashboard = [reverse("admin:scoring_agreement_dashboard", args=[run.pk])] + [
            reverse("admin:scoring_agreement_plot", args=[run.pk, name, "svg"]) for name in PLOTS]
        metric_page = [reverse("admin:scoring_metricevaluation_change", args=[evaluation.pk])]
        if "metric-evaluation-plot" in {p.name for p in __import__("scoring.metric_evaluation.urls",
                                                                       fromlist=["urlpatterns"]).urlpatterns}:
            page = client.get(metric_page[0]).content.decode()
            plot_url = reverse("metric-evaluation-plot", args=[evaluation.pk])
            if plot_url in page:  # the page links its plot (this branch) instead of inlining it
                metric_page.append(plot_url)
        report = {
            "items": args.items, "k": args.k, "responses": Response.objects.filter(study=study).count(),
            "vendor": django.db.connection.vendor, "agreement_compute_s": round(compute_s, 2),
            "dashboard_html_and_4_plots": timed(client, dashboard, args.repeat),
            "dashboard_html_only": timed(client, dashboard[:1], args.repeat),
            "metric_evaluation_page": timed(client, metric_page, args.repeat),
            "responses_changelist": timed(client, [reverse("admin:annotation_response_changelist")], args.repeat),
            "study_changelist": timed(client, [reverse("admin:annotation_study_changelist")], args.repeat),
            "media": str(settings.MEDIA_ROOT),
        }
    print(json.dumps(report))


if __name__ == "__main__":
    main()
