"""Benchmark: `score_stel` against STEL's own code (github nlpsoc/STEL, `src/STEL`), end to end, same model, same
instances, alternated in pairs; checks that both give the same predictions.

Work: STEL's `eval_on_STEL` on STEL's public instances — the 200 characteristic quadruples
(`quad_questions_char_contraction.tsv`, `quad_questions_char_substitution.tsv` in ../shared/data/stel, as published),
scored as quadruples and as STEL-Or-Content triples (STEL's `get_STEL_Or_Content_from_STEL`): 400 predictions with
`SBERTSimilarity(<model>)`. StyleCrowd scores the same 400 with `stel_score` (the service of `manage.py score_stel`):
the two files plus the STEL-Or-Content file this script writes with STEL's rule.

Each side runs in a fresh process. Timed in-process from just before the model loads to the predictions written (the
imports at the start of each process — STEL's modules import torch, sentence-transformers, pandas and scikit-learn;
StyleCrowd's Django — are left out on both sides, and reported), and the whole process (wall clock) too; each side
imports what it needs (StyleCrowd imports torch and transformers only when a sentence is not cached).
StyleCrowd runs twice per pair: cold (model cache and model fingerprint emptied) and warm (second run, every
embedding cached). Needs a checkout of STEL's repository (its code is not part of StyleCrowd): pass the folder that
holds the `STEL` package (the repository's `src`).

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/sc_bench .venv/bin/python benchmarks/score_stel_vs_stel.py \\
        --stel-src /path/to/STEL/src --pairs 3 --out benchmarks/out/score_stel_vs_stel.json

Both sides run on one model directory: by default a copy of the packaged all-MiniLM-L6-v2 with its ONNX graph
(`--onnx-dir`; `manage.py export_onnx minilm --out DIR` writes it once, before any timed run, when it is missing), so
StyleCrowd's `st:` runs on ONNX Runtime (no torch or transformers import) and STEL's `SBERTSimilarity` loads the same
directory's weights with sentence-transformers; `--no-onnx` runs on `--model` itself (StyleCrowd on torch). "Cold"
empties StyleCrowd's model cache and model fingerprints (so the directory, graph included, is hashed again); the
graph itself is part of the model directory, as in a Hugging Face repository that ships `onnx/model.onnx`.

`--stel-python` runs STEL's side with another interpreter (a virtual environment with STEL's own pinned
requirements); by default both sides use this one. Before each run the script waits (up to `--quiet-wait` seconds)
for the 1-minute load average to fall below `--quiet-load`, and records the load each run started at.
"""
from __future__ import annotations

import argparse
import csv
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.local")

STEL_DRIVER = """
import json, sys, time
began = time.perf_counter()
from STEL.STEL import get_STEL_Or_Content_from_STEL
from STEL.utility.eval_on_tasks import eval_model
from STEL.similarity import SBERTSimilarity
imported, cpu = time.perf_counter(), time.process_time()
files, model, out = sys.argv[1].split(","), sys.argv[2], sys.argv[3]
objects = [SBERTSimilarity(model)]
org = eval_model(stel_char_tsv=files, stel_dim_tsv=None, style_objects=objects, output_folder=out + "/",
                 single_predictions_save_path=out + "/quadruple.tsv")
# STEL's default run concatenates its dimension and characteristic files with ignore_index=True; with the
# characteristic files alone the row labels repeat (0-99 twice) and get_STEL_Or_Content_from_STEL's .at[label]
# writes would hit two rows, so the labels are made unique first.
triples = get_STEL_Or_Content_from_STEL(org["stel_tasks"].reset_index(drop=True))
eval_model(style_objects=objects, stel_instances=triples, eval_on_triple=True, output_folder=out + "/",
           single_predictions_save_path=out + "/triple.tsv")
done = time.perf_counter()
print(json.dumps({"imports_s": imported - began, "scoring_s": done - imported,
                  "scoring_cpu_s": time.process_time() - cpu}))
"""

OURS_DRIVER = """
import json, os, sys, time
began = time.perf_counter()
sys.path.insert(0, os.getcwd())
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.local")
import django
django.setup()
from scoring.model_scoring.services import stel_score
imported, cpu = time.perf_counter(), time.process_time()
files, method, out = sys.argv[1].split(","), sys.argv[2], sys.argv[3]
summary = stel_score(benchmark_paths=files, methods=method, device="cpu", predictions_path=out)
done = time.perf_counter()
print(json.dumps({"imports_s": imported - began, "scoring_s": done - imported,
                  "scoring_cpu_s": time.process_time() - cpu, "encoded": summary["encoded"],
                  "method_s": summary["seconds"][method], "startup_s": summary["startup_s"][method],
                  "loaded": sorted(m for m in ("torch", "transformers", "onnxruntime") if m in sys.modules)}))
"""


def or_content_file(sources: list[Path], out: Path) -> None:
    """STEL-Or-Content from STEL quadruples, STEL's rule: the alternative in Anchor 1's style stays, the other is
    replaced by Anchor 2 (so the choice is between style and content); written as triples (no Anchor 2)."""
    rows, header = [], []
    for path in sources:
        with path.open(encoding="utf-8", newline="") as handle:
            reader = csv.reader(handle, delimiter="\t")
            header = next(reader)
            rows += [dict(zip(header, row, strict=True)) for row in reader]
    with out.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle, delimiter="\t", lineterminator="\n")
        writer.writerow(header)
        for row in rows:
            if row["Correct Alternative"].strip() == "1":
                row["Alternative 1.2"] = row["Anchor 2"]
            else:
                row["Alternative 1.1"] = row["Anchor 2"]
            row["Anchor 2"], row["ID"] = "", "OC-" + row["ID"]
            writer.writerow([row[column] for column in header])


QUIET = {"load": 1.5, "wait": 240.0}


def quiet_load() -> tuple[float, float]:
    """Wait (polling every 5 s, at most QUIET["wait"] seconds) for the 1-minute load average to fall below
    QUIET["load"]; the load it starts at and the seconds waited (the load is recorded either way)."""
    began = time.monotonic()
    while os.getloadavg()[0] >= QUIET["load"] and time.monotonic() - began < QUIET["wait"]:
        time.sleep(5)
    return os.getloadavg()[0], time.monotonic() - began


def timed(command: list[str], *, cwd: Path, env: dict[str, str]) -> dict[str, float]:
    """Run one side; its own timings, the process's wall clock and CPU seconds (user + system: less sensitive than
    the wall clock to other processes sharing the cores), and the load average it started at (after waiting for a
    quiet machine)."""
    load, waited = quiet_load()
    cpu_before = resource.getrusage(resource.RUSAGE_CHILDREN)
    began = time.perf_counter()
    done = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - began
    cpu_after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode:
        raise SystemExit(f"{command[:3]} failed:\n{done.stdout[-2000:]}\n{done.stderr[-3000:]}")
    cpu = (cpu_after.ru_utime - cpu_before.ru_utime) + (cpu_after.ru_stime - cpu_before.ru_stime)
    return {**json.loads(done.stdout.strip().splitlines()[-1]), "process_s": round(wall, 2),
            "process_cpu_s": round(cpu, 2), "load_1min": round(load, 2), "waited_s": round(waited)}


def predictions(stel_out: Path, ours: Path) -> dict[str, int]:
    """How many of the 400 predictions agree (STEL writes 0 for a tie, as StyleCrowd's `prediction`)."""
    theirs = {}
    for name, prefix in (("quadruple.tsv", ""), ("triple.tsv", "OC-")):
        with (stel_out / name).open(encoding="utf-8") as handle:
            for row in csv.DictReader(handle, delimiter="\t"):
                theirs[prefix + row["ID"]] = int(row["SBERTSimilarity"])
    with ours.open(encoding="utf-8") as handle:
        mine = {row["ID"]: int(row["prediction"]) for row in csv.DictReader(handle, delimiter="\t")}
    return {"instances": len(theirs), "same": sum(mine.get(key) == value for key, value in theirs.items())}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--stel-src", required=True, help="The folder of a STEL checkout that holds the STEL package.")
    parser.add_argument("--model", default="minilm", help="Model directory (default: the packaged all-MiniLM-L6-v2).")
    parser.add_argument("--onnx-dir", default=str(ROOT / "benchmarks" / "out" / "models" / "all-MiniLM-L6-v2-onnx"),
                        help="Both sides run on this copy of the model with its ONNX graph (onnx/model.onnx, which "
                             "StyleCrowd's st: runs on ONNX Runtime; STEL's code loads the same directory's weights "
                             "with sentence-transformers): `export_onnx MODEL --out DIR` writes it once when it is "
                             "missing, before any timed run (its seconds are reported apart).")
    parser.add_argument("--no-onnx", action="store_true", help="Run on --model itself (StyleCrowd on torch).")
    parser.add_argument("--pairs", type=int, default=3)
    parser.add_argument("--stel-python", default=sys.executable,
                        help="The interpreter of STEL's side (e.g. a venv with STEL's pinned requirements).")
    parser.add_argument("--quiet-load", type=float, default=1.5, help="Wait for a 1-minute load below this.")
    parser.add_argument("--quiet-wait", type=float, default=240.0, help="Wait at most this long (s) before a run.")
    parser.add_argument("--out", default=str(ROOT / "benchmarks" / "out" / "score_stel_vs_stel.json"))
    args = parser.parse_args()

    import django

    django.setup()
    from django.conf import settings

    from scoring.model_cache.services import cache_clear
    from scoring.model_scoring.neural import packaged_minilm_path
    from scoring.models import ModelFingerprint

    stel_src = Path(args.stel_src).resolve()
    if not (stel_src / "STEL" / "STEL.py").is_file():
        raise SystemExit(f"--stel-src {stel_src}: no STEL/STEL.py there (give the src folder of a STEL checkout)")
    model = packaged_minilm_path() if args.model == "minilm" else Path(args.model).resolve()
    export: dict[str, object] = {}
    if not args.no_onnx:
        onnx_dir = Path(args.onnx_dir).resolve()
        if not (onnx_dir / "onnx" / "model.onnx").is_file():
            began = time.perf_counter()
            done = subprocess.run([sys.executable, str(ROOT / "manage.py"), "export_onnx", str(model), "--out",
                                   str(onnx_dir), "--json"], cwd=ROOT, capture_output=True, text=True)
            if done.returncode:
                raise SystemExit(f"export_onnx failed:\n{done.stdout[-2000:]}\n{done.stderr[-3000:]}")
            export = {**json.loads(done.stdout.strip().splitlines()[-1]),
                      "process_s": round(time.perf_counter() - began, 2)}
        model = onnx_dir
    shared = Path(settings.SHARED_DATA_DIR) / "stel"
    quads = [shared / "quad_questions_char_substitution.tsv", shared / "quad_questions_char_contraction.tsv"]
    work = Path(tempfile.mkdtemp(prefix="stel-vs-stel-"))
    triples = work / "or_content.tsv"
    or_content_file(quads, triples)
    env = {**os.environ, "PYTHONPATH": str(stel_src), "TOKENIZERS_PARALLELISM": "false"}
    python, stel_python = sys.executable, args.stel_python
    QUIET.update(load=args.quiet_load, wait=args.quiet_wait)
    runs = []
    for pair in range(1, args.pairs + 1):
        def stel(pair: int = pair) -> dict[str, float]:
            out = work / f"stel-{pair}"
            result = timed([stel_python, "-c", STEL_DRIVER, ",".join(map(str, quads)), str(model), str(out)],
                           cwd=work, env=env)
            return {**result, "out": str(out)}

        def ours(kind: str, pair: int = pair) -> dict[str, float]:
            if kind == "cold":
                cache_clear()
                ModelFingerprint.objects.all().delete()
            out = work / f"ours-{kind}-{pair}.tsv"
            result = timed([python, "-c", OURS_DRIVER, ",".join(map(str, [*quads, triples])), f"st:{model}",
                            str(out)], cwd=ROOT, env=env)
            return {**result, "out": str(out)}

        # Alternate which side runs first, so the machine's drift does not favour one side.
        if pair % 2:
            theirs, cold, warm = stel(), ours("cold"), ours("warm")
        else:
            cold, warm = ours("cold"), ours("warm")
            theirs = stel()
        run = {"pair": pair, "stel": theirs, "cold": cold, "warm": warm,
               "same_predictions_cold": predictions(Path(theirs["out"]), Path(cold["out"])),
               "same_predictions_warm": predictions(Path(theirs["out"]), Path(warm["out"])),
               "speedup_cold": round(theirs["scoring_s"] / cold["scoring_s"], 1),
               "speedup_warm": round(theirs["scoring_s"] / warm["scoring_s"], 1),
               "speedup_cold_process": round(theirs["process_s"] / cold["process_s"], 1),
               "speedup_warm_process": round(theirs["process_s"] / warm["process_s"], 1),
               "speedup_cold_cpu": round(theirs["scoring_cpu_s"] / cold["scoring_cpu_s"], 1),
               "speedup_warm_cpu": round(theirs["scoring_cpu_s"] / warm["scoring_cpu_s"], 1),
               "speedup_cold_process_cpu": round(theirs["process_cpu_s"] / cold["process_cpu_s"], 1),
               "speedup_warm_process_cpu": round(theirs["process_cpu_s"] / warm["process_cpu_s"], 1)}
        runs.append(run)
        print(json.dumps(run), file=sys.stderr)
    medians = {key: sorted(r[key] for r in runs)[len(runs) // 2] for key in
               ("speedup_cold", "speedup_warm", "speedup_cold_process", "speedup_warm_process", "speedup_cold_cpu",
                "speedup_warm_cpu", "speedup_cold_process_cpu", "speedup_warm_process_cpu")}
    versions = subprocess.run([stel_python, "-c", "import torch, transformers, sentence_transformers, pandas, numpy; "
                               "print(torch.__version__, transformers.__version__, sentence_transformers.__version__, "
                               "pandas.__version__, numpy.__version__)"], capture_output=True, text=True).stdout.strip()
    report = {"model": str(model), "onnx_export": export, "instances": 400, "stel_python": stel_python,
              "stel_torch_transformers_st_pandas_numpy": versions, "pairs": runs, "median": medians}
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(report, indent=2))
    print(json.dumps({"ok": all(r["same_predictions_cold"]["same"] == 400 for r in runs), **medians}))


if __name__ == "__main__":
    main()
