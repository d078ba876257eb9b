"""Benchmark: import 100,000 pairs and generate (and store) one quadruple per pair on PostgreSQL.

Usage:
    DJANGO_SETTINGS_MODULE=config.settings.test DATABASE_URL=postgres://postgres@127.0.0.1:5432/sc_bench \
        .venv/bin/python benchmarks/generation.py --pairs 100000

Creates the database if needed, migrates it, and prints one JSON line. The baseline is the straightforward
implementation — one `TaskInstance.objects.create` per instance — timed on a sample and extrapolated.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.test")
os.environ.setdefault("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/sc_bench")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--pairs", type=int, default=100_000)
    parser.add_argument("--baseline-sample", type=int, default=2_000)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()

    import subprocess

    dbname = os.environ["DATABASE_URL"].rsplit("/", 1)[-1]
    subprocess.run(["createdb", "-h", "127.0.0.1", "-U", "postgres", dbname], capture_output=True)

    import django

    django.setup()
    from django.core.management import call_command
    from django.db import transaction

    from tasks.models import Corpus, Order, TaskInstance
    from tasks.services.generation import _instances, draws_make, instances_generate
    from tasks.services.imports import PairRow, component_get, corpus_store

    call_command("migrate", verbosity=0)
    Corpus.objects.filter(name__startswith="bench-").delete()
    pairs = [PairRow(source_id=str(i), text_1=f"hey, wanna grab some food l8r? its on me {i} lol",
                     text_2=f"Would you like to have dinner later? It is my treat, number {i}.")
             for i in range(args.pairs)]
    started = time.perf_counter()
    corpus = corpus_store(name="bench-corpus", component=component_get(name="formality"), import_format="pairs",
                          pairs=pairs)
    store_seconds = time.perf_counter() - started

    started = time.perf_counter()
    run = instances_generate(corpus=corpus, setup="quadruple", seed=args.seed)
    generate_seconds = time.perf_counter() - started
    assert TaskInstance.objects.filter(generation_run=run).count() == args.pairs

    # Baseline: the same instances, one ORM create per row (sampled, then extrapolated).
    sample = min(args.baseline_sample, args.pairs)
    pair_rows = list(corpus.pairs.order_by("position").values_list("id", "source_id", "text_1", "text_2"))
    pair_rows = [(pk, src, {1: t1, 2: t2}) for pk, src, t1, t2 in pair_rows]
    draws = draws_make(n_pairs=len(pair_rows), seed=args.seed + 1, count=sample)
    baseline_corpus = corpus_store(name="bench-baseline", component=corpus.component, import_format="pairs",
                                   pairs=pairs[:2])
    started = time.perf_counter()
    with transaction.atomic():
        for instance in _instances(corpus, run, "quadruple", pair_rows, draws):
            fields = {f.attname: getattr(instance, f.attname) for f in TaskInstance._meta.concrete_fields
                      if f.attname not in ("id", "created_at")}
            fields.update(corpus_id=baseline_corpus.pk, generation_run_id=None,
                          correct_order=Order(instance.correct_order))
            TaskInstance.objects.create(**fields)
    baseline_sample_seconds = time.perf_counter() - started
    baseline_seconds = baseline_sample_seconds * args.pairs / sample
    Corpus.objects.filter(name__startswith="bench-").delete()
    print(json.dumps({
        "pairs": args.pairs, "store_pairs_s": round(store_seconds, 2),
        "generate_and_store_s": round(generate_seconds, 2),
        "instances_per_s": round(args.pairs / generate_seconds), "baseline_per_row_create_s_extrapolated":
        round(baseline_seconds, 1), "baseline_sample": sample, "speedup": round(baseline_seconds / generate_seconds, 1),
    }))


if __name__ == "__main__":
    main()
