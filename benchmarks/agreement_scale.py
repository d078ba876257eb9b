"""Agreement statistics at scale: seed N instances × k responses into PostgreSQL with COPY, then time

  * the floor: merely reading the rows (responses + items) into memory, and
  * everything `compute_agreement` computes: per-instance votes/majority, Fleiss' kappa and Krippendorff's alpha
    with seeded bootstrap CIs (overall, per component, per setup), majority accuracy, per-participant statistics,
    triple vs quadruple, irregular data.

Usage (a database of its own, migrated first):
  createdb -h 127.0.0.1 -U postgres sc_agr_bench
  DJANGO_SETTINGS_MODULE=config.settings.test DATABASE_URL=postgres://postgres@127.0.0.1:5432/sc_agr_bench \
      .venv/bin/python manage.py migrate
  DJANGO_SETTINGS_MODULE=config.settings.test DATABASE_URL=postgres://postgres@127.0.0.1:5432/sc_agr_bench \
      .venv/bin/python benchmarks/agreement_scale.py --instances 200000 --k 5 --repeat 3
"""
from __future__ import annotations

import argparse
import io
import json
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.test")

import django  # noqa: E402

django.setup()

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from django.db import connection, models, transaction  # noqa: E402
from django.utils import timezone  # noqa: E402

from annotation.models import Participant, Response, Study, StudyItem  # noqa: E402
from scoring.agreement import selectors  # noqa: E402
from scoring.agreement.stats.summary import agreement_compute  # noqa: E402
from tasks.models import Corpus, StyleComponent, TaskInstance  # noqa: E402

SLUG = "bench-agreement-scale"
COMPONENTS = ["formality", "simplicity", "contraction", "nbr_substitution"]


def copy_frame(model: type[models.Model], frame: pd.DataFrame) -> None:
    """COPY `frame` into the model's table; columns it lacks get the field's default (so added fields work)."""
    now = timezone.now().isoformat()
    for field in model._meta.concrete_fields:
        if field.primary_key or field.column in frame.columns:
            continue
        if getattr(field, "auto_now_add", False) or getattr(field, "auto_now", False):
            frame[field.column] = now
        elif field.has_default():
            default = field.get_default()
            frame[field.column] = json.dumps(default) if isinstance(field, models.JSONField) else default
        elif field.null:
            frame[field.column] = None
        else:
            raise SystemExit(f"{model.__name__}.{field.name} needs a value")
    for column in frame.columns:
        if frame[column].dtype == bool:
            frame[column] = frame[column].map({True: "t", False: "f"})
    buffer = io.StringIO()
    frame.to_csv(buffer, index=False, header=False, na_rep="\\N")
    columns = ", ".join(f'"{c}"' for c in frame.columns)
    with connection.cursor() as cursor:
        statement = f"COPY {model._meta.db_table} ({columns}) FROM STDIN WITH (FORMAT csv, NULL '\\N')"
        with cursor.cursor.copy(statement) as copy:
            copy.write(buffer.getvalue())


def seed(n_instances: int, k: int, n_participants: int) -> Study:
    rng = np.random.default_rng(2021)
    Study.objects.filter(slug=SLUG).delete()
    Corpus.objects.filter(name__startswith=f"{SLUG}-").delete()
    with transaction.atomic():
        study = Study.objects.create(slug=SLUG, title="agreement benchmark", annotators_per_item=k,
                                     min_correct=k // 2 + 1, allow_multiple_setups=True)
        components = {c.name: c for c in StyleComponent.objects.filter(name__in=COMPONENTS)}
        corpora = {name: Corpus.objects.create(name=f"{SLUG}-{name}", component=components[name],
                                               import_format=Corpus.Format.PAIRS) for name in COMPONENTS}
        n_families = n_instances // 2
        family = np.repeat(np.arange(n_families), 2)
        setup = np.tile(np.array(["quadruple", "triple"]), n_families)
        comp = np.array(COMPONENTS)[family % len(COMPONENTS)]
        order = np.where(rng.random(n_instances) < 0.5, "S1-S2", "S2-S1")
        copy_frame(TaskInstance, pd.DataFrame({
            "stel_id": [f"QQ_bench-{i}" for i in range(n_instances)], "setup": setup,
            "component_id": [components[c].pk for c in comp], "corpus_id": [corpora[c].pk for c in comp],
            "position": np.arange(n_instances), "family": [f"fam-{f}" for f in family],
            "anchor_1": "a1", "anchor_2": np.where(setup == "quadruple", "a2", ""), "sentence_1": "s1",
            "sentence_2": "s2", "anchor_1_style": 1,
            "anchor_2_style": pd.Series(np.where(setup == "quadruple", 2, 0), dtype="Int64").where(
                setup == "quadruple"),
            "sentence_1_style": np.where(order == "S1-S2", 1, 2), "sentence_2_style": np.where(order == "S1-S2", 2, 1),
            "correct_order": order, "status": "candidate",
        }))
        ids = pd.DataFrame.from_records(
            TaskInstance.objects.filter(corpus__name__startswith=f"{SLUG}-").values_list("id", "position"),
            columns=["id", "position"]).sort_values("position")["id"].to_numpy()
        correct = np.where(setup == "quadruple", order, np.where(order == "S1-S2", "S1", "S2"))
        copy_frame(StudyItem, pd.DataFrame({
            "study_id": study.pk, "instance_id": ids, "external_id": [f"QQ_bench-{i}" for i in range(n_instances)],
            "position": np.arange(n_instances), "kind": setup, "component_id": [components[c].pk for c in comp],
            "family": [f"fam-{f}" for f in family], "correct_answer": correct,
        }))
        item_ids = pd.DataFrame.from_records(StudyItem.objects.filter(study=study).values_list("id", "position"),
                                             columns=["id", "position"]).sort_values("position")["id"].to_numpy()
        copy_frame(Participant, pd.DataFrame({
            "study_id": study.pk, "platform": "prolific", "external_id": [f"P{j:06d}" for j in range(n_participants)],
        }))
        people = np.array(Participant.objects.filter(study=study).order_by("id").values_list("id", flat=True))
        # Each instance is hard or easy for the crowd: per-instance accuracy drawn from a beta distribution.
        skill = rng.beta(5, 2, n_instances)
        correct_vote = rng.random((n_instances, k)) < skill[:, None]
        wrong = np.where(setup == "quadruple", np.where(order == "S1-S2", "S2-S1", "S1-S2"),
                         np.where(order == "S1-S2", "S2", "S1"))
        answers = np.where(correct_vote, correct[:, None], wrong[:, None]).ravel()
        # k distinct raters per instance (steps of 7 around the pool, from a random start)
        offsets = rng.integers(0, len(people), n_instances)
        raters = people[(offsets[:, None] + np.arange(k)[None, :] * 7) % len(people)].ravel()
        base = timezone.now().timestamp() - 86400 * 30
        answered = pd.to_datetime(base + np.arange(n_instances * k) * 2.0, unit="s", utc=True)
        copy_frame(Response, pd.DataFrame({
            "study_id": study.pk, "participant_id": raters, "study_item_id": np.repeat(item_ids, k),
            "batch_number": 1, "question": "", "answer": answers, "is_screening": False,
            "is_correct": correct_vote.ravel(), "is_valid": True,
            "answered_at": answered.strftime("%Y-%m-%d %H:%M:%S.%f+00:00"),
            "seconds": rng.gamma(3, 4, n_instances * k).round(2),
        }))
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE annotation_response; ANALYZE annotation_studyitem; ANALYZE tasks_taskinstance")
    return study


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--instances", type=int, default=200_000)
    parser.add_argument("--k", type=int, default=5)
    parser.add_argument("--participants", type=int, default=4000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--resamples", type=int, default=1000)
    parser.add_argument("--reuse", action="store_true", help="Keep rows seeded by an earlier run.")
    args = parser.parse_args()
    if connection.vendor != "postgresql":
        raise SystemExit("run against PostgreSQL (DATABASE_URL)")

    study = Study.objects.filter(slug=SLUG).first()
    expected = args.instances * args.k
    if not (args.reuse and study and Response.objects.filter(study=study).count() == expected):
        started = time.perf_counter()
        study = seed(args.instances, args.k, args.participants)
        print(f"seeded {args.instances} instances x {args.k} responses in {time.perf_counter() - started:.1f} s",
              file=sys.stderr)

    floors, totals, phases = [], [], []
    load_before = round(os.getloadavg()[0], 2)  # the machine is shared: say how busy it was
    for _ in range(args.repeat):
        started = time.perf_counter()
        responses = selectors.responses_frame(study_id=study.pk)
        items = selectors.items_frame(study_id=study.pk)
        floors.append(time.perf_counter() - started)
        assert len(responses) == expected and len(items) == args.instances
        del responses, items
        started = time.perf_counter()
        timings: dict[str, float] = {}
        result, per_item = agreement_compute(study=study, seed=0, resamples=args.resamples, timings=timings)
        totals.append(time.perf_counter() - started)
        phases.append(timings)
    print(json.dumps({
        "instances": args.instances, "responses": expected, "k": args.k, "repeat": args.repeat,
        "read_floor_s": {"min": round(min(floors), 2), "median": round(statistics.median(floors), 2)},
        "all_statistics_s": {"min": round(min(totals), 2), "median": round(statistics.median(totals), 2)},
        "phases_s_of_fastest": phases[totals.index(min(totals))],
        "load_average_1min_before_after": [load_before, round(os.getloadavg()[0], 2)],
        "fleiss_kappa": round(result["fleiss_kappa"], 4), "krippendorff_alpha": round(result["krippendorff_alpha"], 4),
        "majority_accuracy": round(result["majority_accuracy"], 4),
        "bootstrap_resamples_overall": result["fleiss_kappa_ci"]["resamples"],
        "bootstrap_resamples_per_component": {k: v["fleiss_kappa_ci"]["resamples"]
                                              for k, v in result["components"].items()},
        "participants": result["n_participants"], "triple_vs_quadruple": result["triple_vs_quadruple"]["n_instances"],
    }))


if __name__ == "__main__":
    main()
