"""The model cache (scoring/model_cache): model outputs computed once per model and text, read back exactly,
bounded, invalidated by a changed model directory, and skipping the model entirely when everything is cached."""
from __future__ import annotations

import os
import shutil
from pathlib import Path

import numpy as np
import pytest

from scoring.metric_evaluation import MetricItem, metrics_resolve
from scoring.model_cache.services import (
    cache_namespace,
    cache_trim,
    cached_outputs,
    model_cache_used,
    model_identity,
    text_hash,
)
from scoring.model_scoring.neural import SentenceTransformerSimilarity
from scoring.model_scoring.services import stel_score
from scoring.models import ModelCacheEntry, ModelFingerprint
from tests.scoring.metric_fixtures import tiny_gpt2_dir

pytestmark = pytest.mark.django_db
SHARED = Path(__file__).resolve().parents[3] / ".." / "shared" / "data" / "stel"


def _vectors(texts: list[str]) -> list[np.ndarray]:
    return [np.array([len(t), t.count(" "), 0.5], dtype=np.float32) for t in texts]


def test_only_missing_texts_are_computed_and_read_back_exactly(settings):
    calls: list[list[str]] = []

    def compute(texts: list[str]) -> list[np.ndarray]:
        calls.append(texts)
        return _vectors(texts)

    with model_cache_used():
        first, computed = cached_outputs(namespace="test:float32:cpu:abc", texts=["a b", "c"], compute=compute)
        again, recomputed = cached_outputs(namespace="test:float32:cpu:abc", texts=["c", "d e f", "a b"],
                                           compute=compute)
    assert computed == 2 and recomputed == 1 and calls == [["a b", "c"], ["d e f"]]
    assert np.array_equal(again[2], first[0]) and again[2].dtype == np.float32
    assert ModelCacheEntry.objects.filter(text_hash=text_hash("d e f")).count() == 1
    # Outside a scoring run nothing is read or stored.
    _, computed = cached_outputs(namespace="test:float32:cpu:abc", texts=["a b"], compute=compute)
    assert computed == 1 and calls[-1] == ["a b"]
    settings.MODEL_CACHE_MAX_BYTES = 0  # STYLECROWD_MODEL_CACHE_MB=0: off
    with model_cache_used():
        _, computed = cached_outputs(namespace="test:float32:cpu:abc", texts=["c"], compute=compute)
    assert computed == 1


def test_the_cache_stays_within_its_bound_dropping_the_least_recently_used(settings):
    with model_cache_used():
        for n in range(10):
            cached_outputs(namespace="test:ns", texts=[f"text {n}"], compute=lambda t: [np.zeros(25, np.float32)])
    assert ModelCacheEntry.objects.count() == 10  # 100 bytes each
    ModelCacheEntry.objects.filter(text_hash=text_hash("text 0")).update(used_at="2030-01-01T00:00:00Z")
    deleted = cache_trim(max_bytes=500)
    assert deleted == 6 and ModelCacheEntry.objects.count() == 4  # down to 90 % of the bound
    assert ModelCacheEntry.objects.filter(text_hash=text_hash("text 0")).exists()  # used last: kept
    assert not ModelCacheEntry.objects.filter(text_hash=text_hash("text 1")).exists()


def test_a_changed_model_directory_is_a_new_identity_and_drops_the_old_entries(tmp_path):
    model = tmp_path / "model"
    model.mkdir()
    (model / "config.json").write_text("{}")
    (model / "weights.bin").write_bytes(b"\x00" * 1000)
    (model / ".lock").write_text("ignored")
    first = model_identity(path=model)
    assert model_identity(path=model) == first and ModelFingerprint.objects.count() == 1
    copy = tmp_path / "copy"
    shutil.copytree(model, copy)
    os.utime(copy / "weights.bin", (1, 1))
    assert model_identity(path=copy) == first  # same bytes elsewhere (another machine): the same identity
    namespace = cache_namespace(kind="st", path=model, precision="float32", device="cpu")
    with model_cache_used():
        cached_outputs(namespace=namespace, texts=["x"], compute=_vectors)
    (model / "weights.bin").write_bytes(b"\x01" * 1000)  # fine-tuned in place
    second = model_identity(path=model)
    assert second != first
    assert not ModelCacheEntry.objects.filter(namespace=namespace).exists()


@pytest.mark.model
def test_a_warm_score_run_reads_every_embedding_and_never_loads_the_model(tmp_path, monkeypatch):
    files = [SHARED / "quad_questions_char_contraction.tsv"]
    cold = stel_score(benchmark_paths=files, methods="st:minilm", device="cpu", predictions_path=tmp_path / "a.tsv")
    assert cold["encoded"]["st:minilm"] == 202  # every distinct sentence of the file, once

    def no_model(self):
        raise AssertionError("the model was loaded although every sentence was cached")

    monkeypatch.setattr(SentenceTransformerSimilarity, "_load", no_model)
    warm = stel_score(benchmark_paths=files, methods="st:minilm", device="cpu", predictions_path=tmp_path / "b.tsv")
    assert warm["encoded"]["st:minilm"] == 0
    assert warm["sets"] == cold["sets"]
    assert (tmp_path / "a.tsv").read_text() == (tmp_path / "b.tsv").read_text()  # the same predictions, digits


@pytest.mark.model
def test_cached_metrics_give_the_same_scores_without_the_model(tmp_path, monkeypatch):
    from scoring.metric_evaluation import logprob, neural

    items = [MetricItem(source="hey u coming tonight ?", rewrite="are you coming tonight ?", target_style="formal"),
             MetricItem(source="gonna be late", rewrite="i will be late .", target_style="formal"),
             MetricItem(source="gonna be late", rewrite="i will be late .", target_style="formal")]
    gpt2 = tiny_gpt2_dir(tmp_path / "gpt2")
    runs = {}
    for name, options in (("logprob", {"model_path": str(gpt2), "device": "cpu"}), ("embedding_cosine", {})):
        metric = metrics_resolve([name])[0]
        options = metric.check_options(options)
        plain = metric.score(items, options=options)
        with model_cache_used():
            cold = metric.score(items, options=options)
        runs[name] = (metric, options, plain, cold)
    monkeypatch.setattr(logprob, "causal_lm_load", lambda *a: (_ for _ in ()).throw(AssertionError("model loaded")))
    monkeypatch.setattr(neural, "_sentence_transformer", lambda *a: (_ for _ in ()).throw(AssertionError("loaded")))
    for metric, options, plain, cold in runs.values():
        with model_cache_used():
            warm = metric.score(items, options=options)
        assert warm == cold
        for column, values in plain.items():
            assert values == pytest.approx(cold[column], abs=1e-6)
    assert ModelCacheEntry.objects.filter(namespace__startswith="logprob:").count() == 6  # 2 distinct items x 3


def test_the_command_lists_and_clears_the_cache(tmp_path):
    import json

    from django.core.management import call_command
    from django.core.management.base import CommandError

    model = tmp_path / "m"
    model.mkdir()
    (model / "config.json").write_text("{}")
    with model_cache_used():
        for kind in ("st", "logprob"):
            cached_outputs(namespace=cache_namespace(kind=kind, path=model, precision="float32", device="cpu"),
                           texts=["a", "b"], compute=_vectors)
        cached_outputs(namespace="st:float32:cpu:other", texts=["a"], compute=_vectors)

    def run(*args: str) -> dict:
        from io import StringIO

        out = StringIO()
        call_command("model_cache", *args, stdout=out)
        return json.loads(out.getvalue().strip().splitlines()[-1])

    summary = run()
    assert summary["ok"] and summary["entries"] == 5 and summary["bytes"] == 5 * 12
    assert sorted(n["entries"] for n in summary["namespaces"]) == [1, 2, 2]
    assert run("--clear", "--model", str(model))["deleted"] == 4
    assert run()["entries"] == 1
    with pytest.raises(CommandError, match="--model goes with --clear"):
        call_command("model_cache", "--model", str(model))
    assert run("--clear")["deleted"] == 1
