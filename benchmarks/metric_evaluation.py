"""Benchmark: every metric of evaluate_metrics on a Likert study of a few hundred TurkCorpus items, each against a
straightforward per-item implementation of the same metric (the baseline).

Usage:
    DJANGO_SETTINGS_MODULE=config.settings.test DATABASE_URL=postgres://postgres@127.0.0.1:5432/sc_met_bench \
        .venv/bin/python benchmarks/metric_evaluation.py --sources 100 --per-source 3

Items: the first `sources` rows of ../shared/data/turkcorpus/tune.8turkers.organized.tsv, each with the rewrites of
turkers 0..per-source-1 as three "systems", the Simple Wikipedia sentence as reference. Ratings are random (3
raters, seeded): only the timings matter here. Models: embedding_cosine and bertscore use the packaged
all-MiniLM-L6-v2; nli_mutual a MiniLM-sized classifier (the packaged encoder with a random 3-way head, so the
speed of a MiniLM NLI cross-encoder); logprob a randomly initialised GPT-2-small-sized LM (124M parameters) with
the MiniLM word-piece tokenizer — speed does not depend on the weights. Prints a Markdown table and one JSON line.
"""
from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.test")
os.environ.setdefault("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/sc_met_bench")


def build_models(root: Path) -> dict[str, Path]:
    import torch
    from transformers import BertForSequenceClassification, GPT2Config, GPT2LMHeadModel

    from scoring.metric_evaluation.base import minilm_path

    minilm = minilm_path()
    nli = root / "nli"
    label2id = {"contradiction": 0, "neutral": 1, "entailment": 2}
    torch.manual_seed(0)
    BertForSequenceClassification.from_pretrained(
        minilm, num_labels=3, label2id=label2id, id2label={v: k for k, v in label2id.items()}
    ).save_pretrained(nli)
    lm = root / "lm"
    GPT2LMHeadModel(GPT2Config(vocab_size=30522, n_positions=512)).save_pretrained(lm)
    for name in ("tokenizer.json", "tokenizer_config.json", "vocab.txt", "special_tokens_map.json"):
        shutil.copy(minilm / name, nli / name)
        shutil.copy(minilm / name, lm / name)
    return {"nli": nli, "lm": lm}


def build_study(slug: str, sources: int, per_source: int, seed: int) -> int:
    import csv

    from django.conf import settings
    from django.db import transaction
    from django.utils import timezone

    from annotation.models import Participant, Response, Study, StudyItem

    rng = random.Random(seed)
    path = Path(settings.SHARED_DATA_DIR) / "turkcorpus" / "tune.8turkers.organized.tsv"
    rows = []
    with path.open(encoding="utf-8") as handle:
        for cells in csv.reader(handle, delimiter="\t", quoting=csv.QUOTE_NONE):
            cells = [c.strip() for c in cells]
            if len(cells) >= 3 + per_source and all(cells[1:3 + per_source]):
                rows.append(cells)
            if len(rows) == sources:
                break
    with transaction.atomic():
        Study.objects.filter(slug=slug).delete()
        study = Study.objects.create(slug=slug, item_kind="likert", annotators_per_item=3, min_correct=2,
                                     questions=[{"name": "content", "text": "content", "min": 1, "max": 5,
                                                 "labels": {}, "level": "ordinal"}])
        items = StudyItem.objects.bulk_create([
            StudyItem(study=study, external_id=f"{cells[0]}-t{k}", position=n * per_source + k, kind="likert",
                      payload={"source": cells[1], "rewrite": cells[3 + k], "reference": cells[2],
                               "target_style": "simple" if n % 2 else "plain", "system": f"turk_{k}"})
            for n, cells in enumerate(rows) for k in range(per_source)
        ])
        raters = [Participant.objects.create(study=study, platform="imported", external_id=f"r{i}") for i in range(3)]
        now = timezone.now()
        Response.objects.bulk_create([
            Response(study=study, participant=r, study_item=item, question="content", value=v, answer=str(v),
                     answered_at=now)
            for item in items for r in raters for v in [rng.randint(1, 5)]
        ])
    return len(items)


def timed(fn) -> tuple[float, object]:
    started = time.perf_counter()
    value = fn()
    return time.perf_counter() - started, value


def baselines(items, models: dict[str, Path]) -> dict[str, object]:
    """Straightforward per-item implementations of each metric."""
    import torch

    from scoring.metric_evaluation.base import minilm_path

    def bleu():
        import sacrebleu
        return [sacrebleu.sentence_bleu(i.rewrite, [i.source]).score for i in items] + [
            sacrebleu.sentence_bleu(i.rewrite, [i.reference]).score for i in items]

    def chrf():
        import sacrebleu
        return [sacrebleu.sentence_chrf(i.rewrite, [i.source]).score for i in items] + [
            sacrebleu.sentence_chrf(i.rewrite, [i.reference]).score for i in items]

    def levenshtein():
        from rapidfuzz.distance import Levenshtein
        return [Levenshtein.normalized_similarity(i.rewrite, t) for i in items for t in (i.source, i.reference)]

    def jaro_winkler():
        from rapidfuzz.distance import JaroWinkler
        return [JaroWinkler.normalized_similarity(i.rewrite, t) for i in items for t in (i.source, i.reference)]

    def embedding_cosine():
        from sentence_transformers import SentenceTransformer
        model = SentenceTransformer(str(minilm_path()), device="cpu")
        out = []
        for i in items:  # one encode call per item, source and reference re-encoded every time
            v = model.encode([i.source, i.rewrite, i.reference], normalize_embeddings=True)
            out.append((float(v[0] @ v[1]), float(v[2] @ v[1])))
        return out

    def bertscore():
        from bert_score import BERTScorer
        scorer = BERTScorer(model_type=str(minilm_path()), num_layers=6, device="cpu")
        return [float(scorer.score([i.rewrite], [t])[2][0]) for i in items for t in (i.source, i.reference)]

    def nli_mutual():
        from transformers import AutoModelForSequenceClassification, AutoTokenizer
        tok = AutoTokenizer.from_pretrained(models["nli"])
        model = AutoModelForSequenceClassification.from_pretrained(models["nli"]).eval()
        out = []
        with torch.no_grad():
            for i in items:
                p = [torch.softmax(model(**tok(a, b, return_tensors="pt")).logits, -1)[0, 2].item()
                     for a, b in ((i.source, i.rewrite), (i.rewrite, i.source))]
                out.append(sum(p) / 2)
        return out

    def logprob():
        from scoring.metric_evaluation import metrics_resolve
        metric = metrics_resolve(["logprob"])[0]
        # The same code with batch size 1: one forward pass per context per item.
        return metric.score(items, options=metric.check_options({"model_path": str(models["lm"]), "batch_size": 1,
                                                                 "device": "cpu"}))

    return {"bleu": bleu, "chrf": chrf, "levenshtein": levenshtein, "jaro_winkler": jaro_winkler,
            "embedding_cosine": embedding_cosine, "bertscore": bertscore, "nli_mutual": nli_mutual,
            "logprob": logprob}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sources", type=int, default=100)
    parser.add_argument("--per-source", type=int, default=3)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--metrics", default="bleu,chrf,levenshtein,jaro_winkler,embedding_cosine,bertscore,"
                                               "nli_mutual,logprob")
    parser.add_argument("--repeats", type=int, default=1, help="Best of N, ours and baseline alternating.")
    parser.add_argument("--skip-baseline", default="", help="Comma-separated metrics whose baseline to skip.")
    args = parser.parse_args()

    dbname = os.environ["DATABASE_URL"].rsplit("/", 1)[-1]
    subprocess.run(["createdb", "-h", "127.0.0.1", "-U", "postgres", dbname], capture_output=True)
    import django

    django.setup()
    import torch
    from django.core.management import call_command

    from scoring.metric_evaluation.services import metric_evaluation_compute, metric_evaluation_prepare

    torch.set_num_threads(max(1, os.cpu_count() or 1))
    call_command("migrate", verbosity=0)
    n_items = build_study("bench-likert", args.sources, args.per_source, args.seed)
    root = Path(tempfile.mkdtemp(prefix="metric-bench-"))
    models = build_models(root)
    options = {"device": "cpu", "nli_mutual": {"model_path": str(models["nli"])},
               "logprob": {"model_path": str(models["lm"])}}
    names = [m for m in args.metrics.split(",") if m]
    skip = set(args.skip_baseline.split(","))
    results = {}
    for name in names:
        request = metric_evaluation_prepare(study_slug="bench-likert", question="content", metric_names=[name],
                                            options=options)
        items = [r.item for r in request.items]
        cold, _ = timed(lambda request=request: metric_evaluation_compute(request=request))  # loads the model
        compute, _ = timed(lambda request=request: metric_evaluation_compute(request=request))
        metric = request.metrics[0]
        fn = baselines(items, models)[name] if name not in skip else None
        if fn and args.repeats == 1 and name in {"embedding_cosine", "bertscore", "nli_mutual"}:
            fn()  # warm its caches too
        # Ours and the baseline alternate, best of `repeats` each: the shared machine's load swings by 4x within
        # minutes, so back-to-back single runs would mostly measure the load.
        warm, base = float("inf"), float("inf") if fn else None
        for _ in range(args.repeats):
            warm = min(warm, timed(lambda metric=metric, items=items, request=request: metric.score(
                items, options=request.options[metric.name]))[0])
            if fn:
                base = min(base, timed(fn)[0])
        results[name] = {"cold_s": round(cold, 3), "compute_s": round(compute, 3), "score_s": round(warm, 3),
                         "per_item_ms": round(1000 * warm / n_items, 3),
                         "baseline_s": round(base, 3) if base is not None else None,
                         "speedup": round(base / warm, 2) if base else None}
        print(f"{name}: {results[name]}", file=sys.stderr)
    everything = metric_evaluation_prepare(study_slug="bench-likert", question="content", metric_names=names,
                                           options=options, by="style")
    total, _ = timed(lambda: metric_evaluation_compute(request=everything))
    print(f"\nitems: {n_items}, threads: {torch.get_num_threads()}\n")
    print("| metric | first evaluation incl. model load (s) | warm evaluation (s) | metric.score (s) | ms / item "
          "| per-item baseline (s) | speed-up |")
    print("|---|---|---|---|---|---|---|")
    for name, r in results.items():
        print(f"| {name} | {r['cold_s']} | {r['compute_s']} | {r['score_s']} | {r['per_item_ms']} | "
              f"{r['baseline_s']} | {r['speedup']} |")
    print(f"\nall metrics in one evaluation (warm, by style): {total:.2f} s")
    print(json.dumps({"items": n_items, "metrics": results, "all_warm_s": round(total, 3)}))
    shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
