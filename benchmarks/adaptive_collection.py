"""Adaptive collection saving: the same items collected with and without adaptive stopping.

Items are the 200 real STEL task instances in ../shared/data/stel/quad_questions_char_*.tsv. Each item's
probability of a correct answer comes from its `# Votes out of 5 for Correct Alternative` (votes/5) where that
column is filled; where it is empty (it is empty in both shared files: STEL did not crowd-annotate these
characteristics) the script draws p_i from a Beta distribution with the given mean (a stated assumption, swept).
Both studies are played by simulate_annotators over HTTP (gunicorn + PostgreSQL), k=5, m=3.

With `--guide H` a third study is adaptive with a model guide (annotation.services.guidance): a simulated
crowd-like model, right on item i with the same probability p_i as one participant and order-sensitive on 20 % of
the items (no guide answer there), stops an item once its first H valid answers all equal the model's answer.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/sc_ann_bench .venv/bin/python benchmarks/adaptive_collection.py \
        --means 0.9 0.8 0.7 --out benchmarks/out/adaptive_collection.json
    DATABASE_URL=… .venv/bin/python benchmarks/adaptive_collection.py --means 0.8 --guide 2 \
        --out benchmarks/out/adaptive_collection_guided.json
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.test")
os.environ.setdefault("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/sc_ann_bench")

from load_annotation import ensure_database, wait_for  # noqa: E402

from tasks.stel import tsv as stel_tsv  # noqa: E402

VOTES = stel_tsv.VOTES


def read_stel(shared: Path) -> pd.DataFrame:
    """The published instances, read by STEL's one reader (tasks.stel.tsv), as a frame with STEL's column names."""
    records = []
    seen: dict[str, str] = {}
    for path in sorted(shared.glob("stel/quad_questions_char_*.tsv")):
        records += stel_tsv.stel_tsv_parse(path.read_text("utf-8"), where=lambda line, path=path: f"{path}:{line}",
                                           empty=str(path), seen=seen)
    return pd.DataFrame({
        stel_tsv.ANCHOR_1: [r.anchor_1 for r in records], stel_tsv.ANCHOR_2: [r.anchor_2 for r in records],
        stel_tsv.ALTERNATIVE_1: [r.alternative_1 for r in records],
        stel_tsv.ALTERNATIVE_2: [r.alternative_2 for r in records], stel_tsv.CORRECT: [r.correct for r in records],
        stel_tsv.ID: [r.id for r in records], VOTES: [r.votes for r in records],
        stel_tsv.STYLE_TYPE: [r.style_type for r in records],
    })


def item_probabilities(frame: pd.DataFrame, mean: float, seed: int, concentration: float) -> tuple[dict, str]:
    votes = pd.to_numeric(frame[VOTES], errors="coerce")
    rng = np.random.default_rng(seed)
    drawn = rng.beta(mean * concentration, (1 - mean) * concentration, size=len(frame))
    probs = np.where(votes.notna(), votes / 5, drawn)
    source = f"{int(votes.notna().sum())} items from published votes, {int(votes.isna().sum())} drawn from " \
             f"Beta(mean={mean}, concentration={concentration})"
    return dict(zip(frame["ID"].astype(str), probs.round(4).tolist(), strict=True)), source


def build(frame: pd.DataFrame, slug: str, adaptive: bool) -> int:
    import django

    django.setup()
    from annotation.services.studies import study_create
    from annotation.services.study_settings import study_settings_build
    from tasks.models import Corpus, StyleComponent, TaskInstance

    corpus_name = "adaptive-bench-stel"
    corpus = Corpus.objects.filter(name=corpus_name).first()
    if corpus is None:
        component = StyleComponent.objects.get(name="contraction")
        corpus = Corpus.objects.create(name=corpus_name, component=component, import_format=Corpus.Format.STEL,
                                       source="../shared/data/stel/quad_questions_char_*.tsv")
        components = {c.name: c for c in StyleComponent.objects.all()}
        TaskInstance.objects.bulk_create([
            TaskInstance(
                stel_id=row["ID"], setup="quadruple", component=components[row["style type"]], corpus=corpus,
                position=i, family=row["ID"], anchor_1=row["Anchor 1"], anchor_2=row["Anchor 2"],
                sentence_1=row["Alternative 1.1"], sentence_2=row["Alternative 1.2"], anchor_1_style=1,
                anchor_2_style=2, sentence_1_style=1 if row["Correct Alternative"] == 1 else 2,
                sentence_2_style=2 if row["Correct Alternative"] == 1 else 1,
                correct_order="S1-S2" if row["Correct Alternative"] == 1 else "S2-S1",
            )
            for i, row in frame.iterrows()
        ])
    study = study_create(
        slug=slug, item_kind="quadruple", corpus=[corpus_name], eligibility_questions=[],
        settings=study_settings_build(
            annotators_per_item=5, min_correct=3, items_per_batch=14, screening_per_batch=0, max_batches=50,
            adaptive=adaptive,
        ),
    )
    return study.pk


def guide_simulated(study_id: int, probs: dict, stop_after: int, seed: int) -> dict:
    """A crowd-like model as the study's guide: right with p_i, order-sensitive (no guide answer) on 20 %."""
    from annotation.models import Study, StudyItem
    from annotation.services.guidance import study_guide_set

    rng = np.random.default_rng(seed)
    answers = {}
    for item in StudyItem.objects.filter(study_id=study_id).order_by("pk"):
        right, sensitive = rng.random() < probs[item.external_id], rng.random() < 0.2
        if not sensitive:
            answers[item.pk] = item.correct_answer if right else ("S1-S2" if item.correct_answer == "S2-S1"
                                                                   else "S2-S1")
    return study_guide_set(study=Study.objects.get(pk=study_id), answers=answers, stop_after=stop_after,
                           source="simulated crowd-like model")


def collected(study_id: int) -> dict:
    from django.db.models import Count, Q

    from annotation.models import Response, StudyItem
    from scoring.agreement import selectors
    from scoring.agreement.stats.votes import first_k_responses, votes_compute

    items = StudyItem.objects.filter(study_id=study_id).annotate(
        correct=Count("responses", filter=Q(responses__is_valid=True, responses__is_correct=True)),
        n=Count("responses", filter=Q(responses__is_valid=True)),
    )
    decided_valid = sum(1 for c, n in items.values_list("correct", "n") if c >= 3)
    return {
        "annotations": Response.objects.filter(study_id=study_id, is_valid=True).count(),
        "items": items.count(),
        "items_with_5": sum(1 for n in items.values_list("n", flat=True) if n >= 5),
        "closed_early": items.filter(is_closed=True).count(),
        "validated_3_of_5": decided_valid,
        # the filter's decision (votes.decide): items closed early are decided on the answers they have
        "validated_by_filter": int((votes_compute(
            first_k=first_k_responses(responses=selectors.responses_frame(study_id=study_id), k=5),
            items=selectors.items_frame(study_id=study_id), k=5, m=3).per_item["decision"] == "validated").sum()),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--means", type=float, nargs="+", default=[0.9, 0.8, 0.7])
    parser.add_argument("--concentration", type=float, default=4.0)
    parser.add_argument("--concurrency", type=int, default=10)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--port", type=int, default=18432)
    parser.add_argument("--out", default=str(ROOT / "benchmarks" / "out" / "adaptive_collection.json"))
    parser.add_argument("--guide", type=int, default=0, metavar="H",
                        help="Add a third study: adaptive with a simulated model guide stopping after H agreeing "
                             "answers.")
    args = parser.parse_args()
    ensure_database(ROOT, sys.executable)
    frame = read_stel(ROOT.parent / "shared" / "data")
    env = {**os.environ, "DJANGO_CONN_MAX_AGE": "600", "DJANGO_LOG_LEVEL": "ERROR"}
    base = f"http://127.0.0.1:{args.port}"
    server = subprocess.Popen(
        [str(Path(sys.executable).parent / "gunicorn"), "config.wsgi:application", "--workers", "2",
         "--worker-class", "gthread", "--threads", "8", "--bind", f"127.0.0.1:{args.port}", "--log-level",
         "warning"], cwd=ROOT, env=env,
    )
    results = []
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    try:
        wait_for(base + "/api/v1/ping/")
        for mean in args.means:
            probs, source = item_probabilities(frame, mean, args.seed, args.concentration)
            prob_file = out.with_name(f"adaptive_probs_{mean}.json")
            prob_file.write_text(json.dumps(probs))
            row = {"mean_accuracy": mean, "probabilities": source}
            arms = [("full", False), ("adaptive", True)] + ([("guided", True)] if args.guide else [])
            for arm, adaptive in arms:
                slug = f"adaptive-{arm}-{int(mean * 100)}-{int(time.time())}"
                study_id = build(frame, slug, adaptive)
                if arm == "guided":
                    row["guide"] = guide_simulated(study_id, probs, args.guide, args.seed)
                sim = subprocess.run(
                    [sys.executable, "manage.py", "simulate_annotators", "--study", slug, "--participants", "200",
                     "--concurrency", str(args.concurrency), "--accuracy-file", str(prob_file), "--base-url", base,
                     "--seed", str(args.seed)],
                    cwd=ROOT, env=env, capture_output=True, text=True,
                )
                if sim.returncode:
                    raise SystemExit(sim.stdout[-2000:] + sim.stderr[-2000:])
                summary = json.loads(sim.stdout.strip().splitlines()[-1])
                row[arm] = {**collected(study_id), "batches": summary.get("batches_completed"),
                            "elapsed_s": summary["elapsed_s"]}
            full, adapt = row["full"]["annotations"], row["adaptive"]["annotations"]
            row["saved_annotations"] = full - adapt
            row["saved_share"] = round(1 - adapt / full, 3)
            if args.guide:
                row["saved_guided"] = full - row["guided"]["annotations"]
                row["saved_guided_share"] = round(1 - row["guided"]["annotations"] / full, 3)
            results.append(row)
            print(json.dumps(row), flush=True)
    finally:
        server.terminate()
        server.wait(timeout=30)
    out.write_text(json.dumps({"command": " ".join(sys.argv), "k": 5, "m": 3, "items": len(frame),
                               "results": results}, indent=2))


if __name__ == "__main__":
    main()
