"""`stel_score`: the one service behind `manage.py score_stel`, the admin and the Celery task."""
from __future__ import annotations

import csv
import itertools
import os
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from core.errors import ApplicationError
from scoring.model_cache.services import model_cache_used
from tasks.stel.tsv import StelRecord

from .base import SimilarityMethod
from .benchmark_io import benchmark_set_read
from .decision import predictions_decide, predictions_force
from .evaluation import accuracy_table, mcnemar_compare
from .methods import method_create, methods_language_check, methods_parse

# (method spec, done, total) while a method runs.
MethodProgress = Callable[[str, int, int], None]
PREDICTION_COLUMNS = ("set", "ID", "method", "component", "prediction", "forced_prediction", "correct_alternative",
                      "sim_a1_s1", "sim_a1_s2", "sim_a2_s2", "sim_a2_s1")


def _pair_lists(instances: list[StelRecord]) -> tuple[list[str], list[str], np.ndarray]:
    """Every similarity the decision rule needs, as two aligned lists: (A1,S1), (A1,S2) for all instances, then
    (A2,S2), (A2,S1) for the quadruples only."""
    quads = [inst for inst in instances if inst.is_quadruple]
    left = [i.anchor_1 for i in instances] * 2 + [q.anchor_2 for q in quads] * 2
    right = ([i.alternative_1 for i in instances] + [i.alternative_2 for i in instances]
             + [q.alternative_2 for q in quads] + [q.alternative_1 for q in quads])
    return left, right, np.array([inst.is_quadruple for inst in instances], dtype=bool)


def _split_similarities(values: np.ndarray, is_quad: np.ndarray) -> dict[str, np.ndarray]:
    n, n_quads = len(is_quad), int(is_quad.sum())
    sims = {"sim_a1_s1": values[:n], "sim_a1_s2": values[n:2 * n]}
    for offset, key in ((2 * n, "sim_a2_s2"), (2 * n + n_quads, "sim_a2_s1")):
        column = np.full(n, np.nan)
        column[is_quad] = values[offset:offset + n_quads]
        sims[key] = column
    return sims


def _write_predictions(path: Path, rows: list[list[Any]]) -> None:
    """Written to a temporary file in the same directory and renamed, so a failed run leaves no half file."""
    path = Path(path)
    if not path.parent.is_dir():
        raise ApplicationError(f"Predictions: directory {path.parent} does not exist", field="predictions")
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as handle:
            writer = csv.writer(handle, delimiter="\t", lineterminator="\n")
            writer.writerow(PREDICTION_COLUMNS)
            writer.writerows(rows)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _fmt(value: float) -> str:
    return "" if np.isnan(value) else f"{value:.6f}"


def _compared(compare: list[str] | str | None, specs: list[str]) -> list[str]:
    """The methods to compare pairwise (McNemar): two or more of the methods scored, or none."""
    compared = (methods_parse(compare) if isinstance(compare, str) else list(compare)) if compare else []
    if compared:
        unknown = [spec for spec in compared if spec not in specs]
        if unknown or len(compared) < 2:
            raise ApplicationError(f"Compare: give two or more of the methods ({', '.join(specs)}); got "
                                   f"{', '.join(compared)}", field="compare")
    return compared


def _method_predictions(spec: str, method: SimilarityMethod, left: list[str], right: list[str], is_quad: np.ndarray,
                        *, seed: int, progress: MethodProgress | None) -> dict[str, Any]:
    """One method's similarities of every pair, its decided predictions and their seeded forced form."""
    report = (lambda done, total: progress(spec, done, total)) if progress else None
    try:
        with model_cache_used():  # embeddings computed before (any run, any machine) are read, not encoded
            values = method.similarity(left, right, **({"progress": report} if report else {}))
    finally:
        method.close()
    values = np.asarray(values, dtype=np.float64)
    if values.shape != (len(left),):
        raise ApplicationError(f"method '{spec}' returned {values.shape} similarities for {len(left)} pairs")
    sims = _split_similarities(values, is_quad)
    decided = predictions_decide(sims["sim_a1_s1"], sims["sim_a1_s2"], sims["sim_a2_s2"], sims["sim_a2_s1"],
                                 is_quad)
    return {"sims": sims, "prediction": decided, "forced": predictions_force(decided, seed=seed, method=spec)}


def _prediction_rows(set_slices: dict[str, slice], everything: list[StelRecord], specs: list[str],
                     per_method: dict[str, dict[str, Any]]) -> list[list[Any]]:
    rows = []
    for name, part in set_slices.items():
        for index in range(part.start, part.stop):
            inst = everything[index]
            for spec in specs:
                data = per_method[spec]
                rows.append([name, inst.id, spec, inst.style_type, int(data["prediction"][index]),
                             int(data["forced"][index]), inst.correct,
                             *(_fmt(data["sims"][key][index]) for key in PREDICTION_COLUMNS[7:])])
    return rows


def stel_score(
    *,
    benchmark_paths: list[str | Path],
    methods: list[str] | str,
    full_paths: list[str | Path] | None = None,
    seed: int = 0,
    device: str = "auto",
    predictions_path: str | Path | None = None,
    compare: list[str] | str | None = None,
    progress: MethodProgress | None = None,
    language: str = "en",
) -> dict[str, Any]:
    """Score style-similarity methods on STEL benchmarks; returns accuracies per set, method and component.
    `language` (BCP 47) is the benchmark's texts': a method made for another one (`pos`, `st:minilm`: English) is
    refused before any work (`methods_language_check`).

    `benchmark_paths` form the validated set, `full_paths` (optional) the unfiltered set. Every method computes
    all the similarities of both sets in one call, so each distinct sentence is encoded once per model.
    """
    specs = methods_parse(methods) if isinstance(methods, str) else methods_parse(",".join(methods))
    compared = _compared(compare, specs)
    if seed < 0:
        raise ApplicationError(f"Seed must be 0 or more, not {seed}", field="seed")
    if not benchmark_paths:
        raise ApplicationError("give at least one benchmark TSV")
    sets: dict[str, list[StelRecord]] = {"validated": benchmark_set_read(list(benchmark_paths))}
    if full_paths:
        sets["full"] = benchmark_set_read(list(full_paths))
    # Resolve every method (model paths, custom classes) before any model work, so a typo fails fast.
    methods_language_check(specs=specs, language=language or "en")
    resolved: list[SimilarityMethod] = [method_create(spec, device=device) for spec in specs]

    everything = [inst for instances in sets.values() for inst in instances]
    left, right, is_quad = _pair_lists(everything)
    correct = np.array([inst.correct for inst in everything], dtype=np.int64)
    components = np.array([inst.style_type for inst in everything], dtype=object)
    set_slices, start = {}, 0
    for name, instances in sets.items():
        set_slices[name] = slice(start, start + len(instances))
        start += len(instances)

    per_method: dict[str, dict[str, Any]] = {}
    timings: dict[str, float] = {}
    startup: dict[str, float] = {}
    encoded: dict[str, int] = {}
    for spec, method in zip(specs, resolved, strict=True):
        began = time.perf_counter()
        per_method[spec] = _method_predictions(spec, method, left, right, is_quad, seed=seed, progress=progress)
        # One-time start-up (a library's first import, a model's load and fingerprint) is reported apart, so
        # `seconds` is the method's own work on these instances.
        started = float(getattr(method, "startup_seconds", 0.0))  # a user's method may not set it
        timings[spec] = round(max(time.perf_counter() - began - started, 0.0), 3)
        startup[spec] = round(started, 3)
        if hasattr(method, "encoded"):
            encoded[spec] = method.encoded  # distinct sentences the model encoded; the rest came from the cache

    results: dict[str, Any] = {}
    for name, part in set_slices.items():
        results[name] = {
            "files": [str(p) for p in (benchmark_paths if name == "validated" else full_paths or [])],
            "instances": part.stop - part.start,
            "quadruples": int(is_quad[part].sum()),
            "methods": {spec: accuracy_table(per_method[spec]["prediction"][part], correct[part], components[part])
                        for spec in specs},
        }
    comparisons = [{"set": name, "methods": [first, second],
                    # McNemar needs right/wrong: undecided instances take their seeded random prediction.
                    **mcnemar_compare(per_method[first]["forced"][part] == correct[part],
                                      per_method[second]["forced"][part] == correct[part])}
                   for first, second in itertools.combinations(compared, 2) for name, part in set_slices.items()]

    if predictions_path:
        _write_predictions(Path(predictions_path), _prediction_rows(set_slices, everything, specs, per_method))

    return {
        "methods": specs, "seed": seed, "device": device, "devices": {m.name: m.device for m in resolved},
        "sets": results, "compare": comparisons,
        "predictions": str(predictions_path) if predictions_path else None, "seconds": timings,
        "startup_s": startup, "encoded": encoded,
    }
