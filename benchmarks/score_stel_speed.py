"""Benchmark: score a STEL-sized benchmark (1,830 quadruples, as in STEL) with every simple method and the packaged
all-MiniLM-L6-v2, vectorized (the project's implementation) vs a straightforward per-pair implementation.

Usage:
    .venv/bin/python benchmarks/score_stel_speed.py [--instances 1830] [--seed 1] [--raw] [--out result.json]
    .venv/bin/python benchmarks/score_stel_speed.py --hf-bert-base --device cuda   # on a GPU machine

The benchmark is STEL's 200 published instances (shared/data/stel) plus quadruples generated from TurkCorpus
(complex/simple Wikipedia sentences, shared/data/turkcorpus) the way STEL builds them: anchor pair (A1, A2) from
one parallel pair, alternatives from another, their order drawn at random. The TurkCorpus pairs are read as
StyleCrowd imports them (STEL's reading: all 8 turkers, text detokenized, STEL's pair test with re-draws);
`--raw` keeps the tokenized text and the old single draw, whose tokenization artefacts leak the label. Both sides
compute the same 7,320 similarities (4 per quadruple); the script checks that they agree before reporting the ratio.

Baselines (per pair, no reuse between pairs): char3gram/punctuation with collections.Counter and a Python cosine,
word_length/uppercase with Python arithmetic, levenshtein with one rapidfuzz call per pair, MiniLM with one
`SentenceTransformer.encode([a, b])` per pair (so every sentence is encoded as often as it occurs in a pair).
"""
from __future__ import annotations

import argparse
import csv
import json
import math
import os
import platform
import re
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.local")

from tasks.stel.tsv import HEADER  # noqa: E402 (STEL's header, defined once)


def turk_pairs_normalized(shared: Path, seed: int) -> list[tuple[str, str]]:
    from tasks.services.normalization import text_detokenize
    from tasks.services.parsers import parse_turkcorpus

    paths = [shared / "turkcorpus" / name for name in ("tune.8turkers.organized.tsv", "test.8turkers.organized.tsv")]
    rows, _ = parse_turkcorpus(paths, seed=seed, min_edit_distance=4, normalize=text_detokenize)
    return [(row.text_1, row.text_2) for row in rows]


def build_benchmark(shared: Path, n_instances: int, seed: int, out: Path, *, raw: bool = False) -> int:
    """STEL's 200 published quadruples + TurkCorpus quadruples up to n_instances, written as one STEL TSV."""
    rows: list[list[str]] = []
    for name in ("quad_questions_char_contraction.tsv", "quad_questions_char_substitution.tsv"):
        with (shared / "stel" / name).open(encoding="utf-8", newline="") as handle:
            rows.extend(list(r.values())[1:] for r in csv.DictReader(handle, delimiter="\t"))
    rng = np.random.default_rng(seed)
    pairs: list[tuple[str, str]] = [] if raw else turk_pairs_normalized(shared, seed)
    for name in ("tune.8turkers.organized.tsv", "test.8turkers.organized.tsv") if raw else ():
        with (shared / "turkcorpus" / name).open(encoding="utf-8", newline="") as handle:
            for cells in csv.reader(handle, delimiter="\t", quoting=csv.QUOTE_NONE):
                # One of the simplifications drawn at random, as STEL did (rows have 8 or 9 candidates).
                candidates = [c.strip() for c in cells[2:] if c.strip()]
                complex_ = cells[1].strip() if len(cells) > 1 else ""
                simple = candidates[int(rng.integers(0, len(candidates)))] if candidates else ""
                if complex_ and simple and complex_ != simple:
                    pairs.append((complex_, simple))
    order = rng.permutation(len(pairs))
    needed = n_instances - len(rows)
    for k in range(needed):
        (c1, s1), (c2, s2) = pairs[order[(2 * k) % len(order)]], pairs[order[(2 * k + 1) % len(order)]]
        keep = bool(rng.integers(0, 2))  # alternatives in the anchors' order (S1-S2) or swapped
        rows.append([c1, s1, c2 if keep else s2, s2 if keep else c2, "1" if keep else "2", f"TQ-{k}", "",
                     "simplicity"])
    with out.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle, delimiter="\t", lineterminator="\n")
        writer.writerow(HEADER)
        writer.writerows([str(i), *row] for i, row in enumerate(rows[:n_instances]))
    return min(len(rows), n_instances)


# --- straightforward per-pair baselines -------------------------------------------------------------------------

def _cosine_counts(x: Counter, y: Counter) -> float:
    if not x and not y:
        return 1.0
    if not x or not y:
        return 0.0
    dot = sum(v * y.get(k, 0) for k, v in x.items())
    return dot / (math.sqrt(sum(v * v for v in x.values())) * math.sqrt(sum(v * v for v in y.values())))


def _trigrams(s: str) -> Counter:
    s = re.sub(r"\s\s+", " ", s.lower())  # lower-cased, runs of whitespace as one space: sklearn's defaults (STEL)
    return Counter(s[i:i + 3] for i in range(len(s) - 2))


def baseline_char3gram(a: str, b: str) -> float:
    return _cosine_counts(_trigrams(a), _trigrams(b))


MARKS = set("',:_!?;.\"()-")  # STEL's 12 marks


def baseline_punctuation(a: str, b: str) -> float:
    return _cosine_counts(Counter(c for c in a if c in MARKS), Counter(c for c in b if c in MARKS))


def baseline_word_length(a: str, b: str) -> float:
    def avg(s: str) -> float:
        words = s.split(" ")  # STEL splits on single spaces
        return sum(map(len, words)) / len(words)

    x, y = avg(a), avg(b)
    return 1.0 if max(x, y) == 0 else 1 - abs(x - y) / max(x, y)


def baseline_uppercase(a: str, b: str) -> float:
    def share(s: str) -> float:
        return sum(c.isupper() for c in s) / len(s) if s else 0.0

    return 1 - abs(share(a) - share(b))


def baseline_levenshtein(a: str, b: str) -> float:
    from rapidfuzz.distance import Levenshtein

    return Levenshtein.normalized_similarity(a, b)


def make_baseline_st(path: str, device: str):  # noqa: ANN201
    from sentence_transformers import SentenceTransformer

    model = SentenceTransformer(path, device=device, local_files_only=True)

    def similarity(a: str, b: str) -> float:
        x, y = model.encode([a, b], show_progress_bar=False)
        return float(x @ y / (np.linalg.norm(x) * np.linalg.norm(y)))

    return similarity


def make_baseline_hf(path: str, device: str):  # noqa: ANN201
    import torch
    from transformers import AutoModel, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(path, local_files_only=True)
    model = AutoModel.from_pretrained(path, local_files_only=True).to(device).eval()

    def embed(s: str) -> np.ndarray:
        with torch.no_grad():
            features = {k: v.to(device) for k, v in tokenizer(s, return_tensors="pt", truncation=True).items()}
            return model(**features).last_hidden_state[0].mean(dim=0).float().cpu().numpy()

    def similarity(a: str, b: str) -> float:
        x, y = embed(a), embed(b)
        return float(x @ y / (np.linalg.norm(x) * np.linalg.norm(y)))

    return similarity


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--instances", type=int, default=1830)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--device", default="cpu", choices=["cpu", "cuda", "auto"])
    parser.add_argument("--methods", default="char3gram,word_length,punctuation,uppercase,levenshtein,st:minilm")
    parser.add_argument("--hf-bert-base", action="store_true",
                        help="Also time hf: with a randomly initialised bert-base-sized model (speed only).")
    parser.add_argument("--baseline-sample", type=int, default=0,
                        help="Time the per-pair model baselines on this many pairs and extrapolate (0 = all).")
    parser.add_argument("--repeats", type=int, default=5, help="Best of this many runs for the simple methods.")
    parser.add_argument("--out", default=None, help="Also write the JSON result to this file.")
    parser.add_argument("--raw", action="store_true", help="TurkCorpus text as published (tokenized; leaks).")
    args = parser.parse_args()

    import django

    django.setup()
    import torch
    from django.conf import settings

    from scoring.model_scoring.benchmark_io import benchmark_set_read
    from scoring.model_scoring.methods import method_create
    from scoring.model_scoring.neural import packaged_minilm_path
    from scoring.model_scoring.services import _pair_lists, stel_score

    workdir = Path(tempfile.mkdtemp(prefix="score-stel-bench-"))
    bench = workdir / "stel_sized.tsv"
    n = build_benchmark(Path(settings.SHARED_DATA_DIR), args.instances, args.seed, bench, raw=args.raw)
    instances = benchmark_set_read([bench])
    left, right, _ = _pair_lists(instances)
    distinct = len(set(left) | set(right))
    specs = [s.strip() for s in args.methods.split(",") if s.strip()]
    extra_models: dict[str, str] = {}
    if args.hf_bert_base:
        from transformers import AutoTokenizer, BertConfig, BertModel

        base_dir = workdir / "bert-base-random"
        torch.manual_seed(0)
        BertModel(BertConfig()).save_pretrained(base_dir)  # bert-base shape: 12 layers, 768 hidden, random weights
        AutoTokenizer.from_pretrained(packaged_minilm_path(), local_files_only=True).save_pretrained(base_dir)
        extra_models["hf:bert-base-random"] = str(base_dir)
        specs.append(f"hf:{base_dir}")

    baselines = {"char3gram": baseline_char3gram, "word_length": baseline_word_length,
                 "punctuation": baseline_punctuation, "uppercase": baseline_uppercase,
                 "levenshtein": baseline_levenshtein}
    results = []
    for spec in specs:
        # Simple methods take milliseconds on a shared machine: best of several runs on both sides.
        repeats = args.repeats if spec in baselines else 1
        method = method_create(spec, device=args.device)
        fast, fast_seconds = None, float("inf")
        for _ in range(repeats):
            began = time.perf_counter()
            fast = method.similarity(left, right)
            fast_seconds = min(fast_seconds, time.perf_counter() - began)
        method.close()
        print(f"{spec}: vectorized {fast_seconds:.3f} s; timing the per-pair baseline", file=sys.stderr)
        if spec in baselines:
            per_pair = baselines[spec]
        elif spec.startswith("st:"):
            per_pair = make_baseline_st(str(method.model_path), method.device)
        else:
            per_pair = make_baseline_hf(str(method.model_path), method.device)
        # The per-pair model baseline can be timed on the first --baseline-sample pairs and extrapolated.
        sample = len(left) if spec in baselines or not args.baseline_sample else min(args.baseline_sample, len(left))
        slow, slow_seconds = None, float("inf")
        for _ in range(repeats):
            began = time.perf_counter()
            slow = np.array([per_pair(a, b) for a, b in zip(left[:sample], right[:sample], strict=True)])
            slow_seconds = min(slow_seconds, time.perf_counter() - began)
        slow_seconds *= len(left) / sample
        max_diff = float(np.max(np.abs(fast[:sample] - slow)))
        tolerance = 1e-9 if spec in baselines else 2e-2 if method.device == "cuda" else 1e-4
        if max_diff > tolerance:
            raise SystemExit(f"{spec}: vectorized and per-pair similarities differ by {max_diff}")
        label = next((k for k, v in extra_models.items() if spec.endswith(v)), spec)
        results.append({"method": label, "seconds": round(fast_seconds, 4),
                        "baseline_seconds": round(slow_seconds, 4), "speedup": round(slow_seconds / fast_seconds, 1),
                        "baseline_pairs_timed": sample,
                        "max_abs_difference": max_diff})
        print(json.dumps(results[-1]), file=sys.stderr)

    # The whole command path once (read, all simple methods + MiniLM, decisions, predictions file).
    began = time.perf_counter()
    summary = stel_score(benchmark_paths=[bench], methods=args.methods, seed=args.seed, device=args.device,
                         predictions_path=workdir / "predictions.tsv")
    end_to_end = time.perf_counter() - began
    report = {
        "instances": n, "pairs": len(left), "distinct_sentences": distinct, "device": args.device,
        "torch_threads": torch.get_num_threads(), "cpu_count": os.cpu_count(), "python": platform.python_version(),
        "methods": results, "end_to_end_seconds": round(end_to_end, 2),
        "turkcorpus": "raw" if args.raw else "normalized",
        "accuracy": {spec: t["overall"]["accuracy"] for spec, t in summary["sets"]["validated"]["methods"].items()},
        "accuracy_stel": {spec: t["overall"]["accuracy_stel"]
                          for spec, t in summary["sets"]["validated"]["methods"].items()},
        "accuracy_simplicity": {spec: t["components"]["simplicity"]["accuracy"]
                                for spec, t in summary["sets"]["validated"]["methods"].items()},
    }
    print(json.dumps(report))
    if args.out:
        Path(args.out).write_text(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
