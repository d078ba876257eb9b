"""Benchmark: throughput of the rule-based content-error builder (error variants per second), no database.

Usage:
    .venv/bin/python benchmarks/content_errors.py [--repeat 20] [--seed 1]

Pairs: the real TurkCorpus test file (359 complex Wikipedia sentences and their first simplification, from
../shared/data), repeated `--repeat` times with a different seed each round, every error type per pair. Prints
one JSON line: variants per second (made + skipped attempts are both counted as attempts), per type.
"""
from __future__ import annotations

import argparse
import csv
import json
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.test")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    import django

    django.setup()
    from django.conf import settings

    from scoring.content_errors.editors import ERROR_TYPES
    from scoring.content_errors.pairs import RewritePair
    from scoring.content_errors.services import content_errors_generate

    path = Path(settings.SHARED_DATA_DIR) / "turkcorpus" / "test.8turkers.organized.tsv"
    with open(path, encoding="utf-8") as handle:
        rows = list(csv.reader(handle, delimiter="\t", quoting=csv.QUOTE_NONE))
    pairs = [RewritePair(f"tc-{r[0]}", r[1].strip(), next(t.strip() for t in r[2:] if t.strip()), "simple")
             for r in rows]
    result: dict[str, object] = {"pairs": len(pairs), "repeat": args.repeat}
    for error_type in (*ERROR_TYPES, "all"):
        types = list(ERROR_TYPES) if error_type == "all" else [error_type]
        made = attempts = 0
        start = time.perf_counter()
        for round_ in range(args.repeat):
            errors, _ = content_errors_generate(pairs=pairs, error_types=types, seed=args.seed + round_)
            made += len(errors)
            attempts += len(pairs) * len(types)
        seconds = time.perf_counter() - start
        result[error_type] = {"variants": made, "attempts": attempts, "seconds": round(seconds, 3),
                              "variants_per_second": round(made / seconds), "yield": round(made / attempts, 3)}
    print(json.dumps(result))


if __name__ == "__main__":
    main()
