"""`st:` on ONNX Runtime (scoring/model_scoring/st_onnx.py) and `export_onnx` (onnx_export.py): which runtime a model
directory gets, the cache namespaces kept apart, the exported graph checked against torch, and sentence-transformers'
own embeddings matched (a tiny randomly initialised BERT here; the packaged MiniLM on STEL's work, 400 predictions)."""
from __future__ import annotations

import csv
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from django.conf import settings

from core.errors import ApplicationError
from scoring.model_cache.services import cache_namespace
from scoring.model_scoring.neural import SentenceTransformerSimilarity, packaged_minilm_path
from scoring.model_scoring.st_onnx import ONNX_FILE, ONNX_RUNTIME, TORCH_RUNTIME, st_runtime
from tests.scoring.model_scoring.test_st_plain import CONFIGS, config_copy

SENTENCES = ["I'm sure it'll work.", "The committee has approved the proposal after a long debate.", "lol", "",
             "u r right", "Certainly.", " ".join(["a rather long sentence, to be truncated"] * 40)]


def onnx_dir(tmp_path: Path) -> Path:
    """A plain-shaped directory (the packaged MiniLM's configuration and tokenizer) with a (dummy) graph file."""
    folder = config_copy(tmp_path / "model")
    for name in ("config.json", "tokenizer.json", "tokenizer_config.json"):
        shutil.copy(packaged_minilm_path() / name, folder / name)
    (folder / ONNX_FILE).parent.mkdir()
    (folder / ONNX_FILE).write_bytes(b"graph")
    return folder


def test_a_plain_model_with_an_onnx_graph_runs_on_onnx_runtime_on_cpu_only(tmp_path, settings):
    folder = onnx_dir(tmp_path)
    assert st_runtime(folder, "cpu") == ONNX_RUNTIME
    assert st_runtime(folder, "cuda") == TORCH_RUNTIME
    settings.ST_RUNTIME = "torch"  # STYLECROWD_ST_RUNTIME=torch
    assert st_runtime(folder, "cpu") == TORCH_RUNTIME


@pytest.mark.parametrize("missing", [str(ONNX_FILE), "tokenizer.json", "1_Pooling/config.json"])
def test_without_the_graph_the_tokenizer_file_or_the_plain_shape_torch_runs(tmp_path, missing):
    folder = onnx_dir(tmp_path)
    (folder / missing).unlink()
    assert st_runtime(folder, "cpu") == TORCH_RUNTIME


def test_the_packaged_minilm_has_no_graph_so_torch_runs_it():
    assert st_runtime(packaged_minilm_path(), "cpu") == TORCH_RUNTIME


@pytest.mark.django_db
def test_the_runtime_is_part_of_the_cache_namespace_torch_keeps_its_old_one(tmp_path):
    folder = onnx_dir(tmp_path)
    torch_ns = cache_namespace(kind="st", path=folder, precision="float32", device="cpu")
    onnx_ns = cache_namespace(kind="st", path=folder, precision="float32", device="cpu", runtime=ONNX_RUNTIME)
    identity = torch_ns.rsplit(":", 1)[1]
    assert torch_ns == f"st:float32:cpu:{identity}"
    assert onnx_ns == f"st:float32:cpu:onnxruntime:{identity}"
    method = SentenceTransformerSimilarity(device="cpu", argument=str(folder))
    assert method.runtime() == ONNX_RUNTIME


@pytest.fixture(scope="module")
def tiny_st(tmp_path_factory) -> Path:
    """A tiny randomly initialised BERT with the packaged MiniLM's tokenizer and sentence-transformers files
    (max_seq_length 256, capped by the tiny model's 128 position embeddings)."""
    import torch
    from transformers import AutoTokenizer, BertConfig, BertModel

    folder = config_copy(tmp_path_factory.mktemp("tiny-st"))
    torch.manual_seed(1234)
    config = BertConfig(vocab_size=30522, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                        intermediate_size=37, max_position_embeddings=128)
    BertModel(config).eval().save_pretrained(folder)
    AutoTokenizer.from_pretrained(packaged_minilm_path(), local_files_only=True).save_pretrained(folder)
    return folder


def sentence_transformers_encode(path: Path, sentences: list[str]) -> np.ndarray:
    from sentence_transformers import SentenceTransformer

    model = SentenceTransformer(str(path), device="cpu", local_files_only=True)
    # sentence-transformers truncates at max_seq_length (256) even past the position embeddings (the tiny model's
    # 128), where the forward pass fails; `st:` caps it, as below.
    model.max_seq_length = min(model.max_seq_length, model[0].auto_model.config.max_position_embeddings)
    return model.encode(sentences, batch_size=3, convert_to_numpy=True, show_progress_bar=False)


@pytest.mark.model
def test_export_writes_a_copy_whose_embeddings_match_sentence_transformers(tiny_st, tmp_path):
    from scoring.model_scoring.onnx_export import onnx_export

    out = tmp_path / "tiny-onnx"
    summary = onnx_export(model_path=tiny_st, out=out)
    assert (out / ONNX_FILE).is_file() and not (tiny_st / ONNX_FILE).exists()
    assert summary["max_abs_diff"] <= 1e-5 and summary["inputs"] == ["input_ids", "attention_mask", "token_type_ids"]
    assert {p.name for p in tiny_st.iterdir()} <= {p.name for p in out.iterdir()}
    # sentences of different lengths share a padded batch
    method = SentenceTransformerSimilarity(device="cpu", argument=str(out), batch_size=3)
    assert method.runtime() == ONNX_RUNTIME
    got = method.encode(SENTENCES)
    expected = sentence_transformers_encode(tiny_st, SENTENCES)
    assert got.dtype == np.float32 and got.shape == expected.shape
    assert np.max(np.abs(got - expected)) <= 1e-5
    # The tokenizer truncates as sentence-transformers does: at the position embeddings (128), not at 256.
    assert max(len(ids) for ids in method._model.tokenize(SENTENCES)) == 128


@pytest.mark.model
def test_export_refuses_a_graph_that_differs_from_torch(tiny_st, tmp_path, monkeypatch):
    from scoring.model_scoring import onnx_export as module

    real = module._torch_embeddings
    monkeypatch.setattr(module, "_torch_embeddings", lambda *args: real(*args) + 1e-3)
    with pytest.raises(ApplicationError, match="differ from torch's by up to"):
        module.onnx_export(model_path=tiny_st, out=tmp_path / "out")
    assert not (tmp_path / "out").exists()


def test_export_refuses_a_model_of_another_shape_and_an_existing_graph(tmp_path):
    from scoring.model_scoring.onnx_export import onnx_export

    folder = onnx_dir(tmp_path)
    with pytest.raises(ApplicationError, match="exists"):
        onnx_export(model_path=folder)
    (folder / "1_Pooling" / "config.json").write_text(json.dumps({"pooling_mode_cls_token": True}))
    with pytest.raises(ApplicationError, match="not a plain sentence-transformers model"):
        onnx_export(model_path=folder, overwrite=True)


def test_export_of_the_packaged_model_needs_out():
    from django.core.management import call_command

    with pytest.raises(Exception, match="--out"):
        call_command("export_onnx", "minilm")


STEL_RUN = """
import json, sys
import numpy as np
import django
django.setup()
from benchmarks.score_stel_vs_stel import or_content_file
from pathlib import Path
from scoring.model_scoring.neural import SentenceTransformerSimilarity
from scoring.model_scoring.services import stel_score
onnx_dir, work = sys.argv[1], Path(sys.argv[2])
quads = [Path(p) for p in sys.argv[3].split(",")]
or_content_file(quads, work / "oc.tsv")
files = [*quads, work / "oc.tsv"]
sentences = json.loads((work / "sentences.json").read_text())
method = SentenceTransformerSimilarity(device="cpu", argument=onnx_dir)
onnx = method.encode(sentences)
stel_score(benchmark_paths=files, methods=f"st:{onnx_dir}", device="cpu", predictions_path=work / "onnx.tsv")
heavy = sorted(m for m in ("torch", "transformers", "sentence_transformers") if m in sys.modules)
from sentence_transformers import SentenceTransformer
reference = SentenceTransformer(onnx_dir, device="cpu", local_files_only=True).encode(
    sentences, batch_size=32, convert_to_numpy=True, show_progress_bar=False)
stel_score(benchmark_paths=files, methods="st:minilm", device="cpu", predictions_path=work / "torch.tsv")
print(json.dumps({"heavy": heavy, "runtime": method.runtime(), "rows": len(onnx),
                  "max_abs_diff": float(np.max(np.abs(onnx - reference)))}))
"""


def predictions(path: Path) -> dict[str, int]:
    with path.open(encoding="utf-8") as handle:
        return {row["ID"]: int(row["prediction"]) for row in csv.DictReader(handle, delimiter="\t")}


@pytest.mark.model
@pytest.mark.slow  # exports the packaged MiniLM and runs STEL's work twice in a fresh interpreter
def test_packaged_minilm_on_onnx_runtime_gives_stel_s_400_predictions_without_torch(shared_data, tmp_path):
    from scoring.model_scoring.onnx_export import onnx_export

    onnx_export(model_path=packaged_minilm_path(), out=tmp_path / "minilm-onnx")
    quads = [shared_data / "stel" / name for name in ("quad_questions_char_substitution.tsv",
                                                       "quad_questions_char_contraction.tsv")]
    sentences = set()
    for path in quads:
        with path.open(encoding="utf-8", newline="") as handle:
            for row in csv.DictReader(handle, delimiter="\t"):
                sentences |= {row["Anchor 1"], row["Anchor 2"], row["Alternative 1.1"], row["Alternative 1.2"]}
    (tmp_path / "sentences.json").write_text(json.dumps(sorted(sentences)))
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "config.settings.test", "STYLECROWD_MODEL_CACHE_MB": "0"}
    proc = subprocess.run([sys.executable, "-c", STEL_RUN, str(tmp_path / "minilm-onnx"), str(tmp_path),
                           ",".join(map(str, quads))], cwd=settings.BASE_DIR, env=env, capture_output=True, text=True,
                          timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    assert result["heavy"] == [] and result["runtime"] == ONNX_RUNTIME and result["rows"] == len(sentences)
    assert result["max_abs_diff"] <= 1e-5
    onnx, torch = predictions(tmp_path / "onnx.tsv"), predictions(tmp_path / "torch.tsv")
    assert len(onnx) == 400 and onnx == torch


assert CONFIGS  # the sentence-transformers files config_copy copies
