"""`export_onnx`: write a plain-shaped sentence-transformers model's encoder as `onnx/model.onnx`, checked first.

The graph follows sentence-transformers' convention (the file `SentenceTransformer(path, backend="onnx")` loads and
Hugging Face repositories ship): inputs `input_ids`, `attention_mask` and, where the model takes them,
`token_type_ids` (int64, dynamic batch and sequence axes), output `last_hidden_state`. torch's TorchScript exporter
(`torch.onnx.export(..., dynamo=False)`) writes it: it needs no package beyond torch, offline. Before anything is
written where the model is read from, the graph runs on ONNX Runtime beside torch on sample sentences (short ones,
and one past `max_seq_length`, so truncation is in the check): sentence embeddings pooled and normalized as `st:`
does; a largest absolute difference above the tolerance refuses the export.

Without `--out`, the graph goes into the model directory (`MODEL_DIR/onnx/model.onnx`, as in a Hugging Face
repository); with `--out DIR`, DIR becomes a copy of the model directory with the graph added (for a model inside an
installed package, such as the packaged all-MiniLM-L6-v2, whose directory is not to be written).
"""
from __future__ import annotations

import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from core.errors import ApplicationError

from .st_onnx import ONNX_FILE, TOKENIZER_FILE, OnnxEncoder
from .st_plain import plain_pipeline

TOLERANCE = 1e-5
OPSET = 17
SAMPLES = (
    "Hi!",
    "I don't think it'll rain today, do u?",
    "The committee has approved the proposal after a lengthy deliberation.",
    "gr8 2 c u l8r, m8 :)",
    "Whereas the former was reluctant, the latter, having considered every alternative, agreed at once.",
    "yes",
)


def _long_sample(words: int) -> str:
    words_ = ["style", "similarity", "is", "measured", "on", "quadruples", "of", "sentences,"]
    return " ".join(words_ * (words // len(words_) + 1))


def _torch_embeddings(model: Any, tokenizer: Any, sentences: list[str], max_length: int, normalize: bool) -> np.ndarray:
    # heavy: torch loads only when exporting
    import torch

    features = tokenizer(sentences, padding=True, truncation=True, max_length=max_length, return_tensors="pt")
    with torch.inference_mode():
        hidden = model(**features).last_hidden_state
    mask = features["attention_mask"].unsqueeze(-1).to(hidden.dtype)
    mean = (hidden * mask).sum(dim=1) / torch.clamp(mask.sum(dim=1), min=1e-9)
    if normalize:
        mean = torch.nn.functional.normalize(mean, p=2, dim=-1)
    return mean.float().numpy()


def _export_graph(model: Any, tokenizer: Any, target: Path, opset: int) -> list[str]:
    """torch's TorchScript exporter; the names of the graph's inputs."""
    # heavy: torch loads only when exporting
    import torch

    sample = tokenizer(list(SAMPLES[:2]), padding=True, return_tensors="pt")
    names = [name for name in ("input_ids", "attention_mask", "token_type_ids") if name in sample]

    class LastHiddenState(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.model = model

        def forward(self, *inputs: Any) -> Any:
            return self.model(**dict(zip(names, inputs, strict=True))).last_hidden_state

    axes = {name: {0: "batch", 1: "sequence"} for name in names}
    axes["last_hidden_state"] = {0: "batch", 1: "sequence"}
    with torch.inference_mode(False), torch.no_grad():
        torch.onnx.export(LastHiddenState().eval(), tuple(sample[name] for name in names), str(target),
                          input_names=names, output_names=["last_hidden_state"], dynamic_axes=axes,
                          opset_version=opset, dynamo=False)
    return names


def _copy_model(source: Path, out: Path) -> None:
    """The model directory's files (not hidden ones, not an `onnx` folder it may have) copied into `out`."""
    shutil.copytree(source, out, dirs_exist_ok=True,
                    ignore=lambda folder, names: [n for n in names if n.startswith(".") or
                                                  (Path(folder) == source and n == "onnx")])


def onnx_export(*, model_path: Path, out: Path | None = None, tolerance: float = TOLERANCE, opset: int = OPSET,
                overwrite: bool = False) -> dict[str, Any]:
    """Export, check against torch, then write `onnx/model.onnx` (into `out`, a copy of the model, when given)."""
    pipeline = plain_pipeline(model_path)
    if pipeline is None:
        raise ApplicationError(f"{model_path} is not a plain sentence-transformers model (Transformer, mean Pooling, "
                               "optionally Normalize): only that shape runs on ONNX Runtime")
    if not (model_path / TOKENIZER_FILE).is_file():
        raise ApplicationError(f"{model_path} has no {TOKENIZER_FILE} (a fast tokenizer's file), which the ONNX path "
                               "tokenizes with")
    home = out if out is not None else model_path
    target = home / ONNX_FILE
    if out is not None and out.exists() and any(out.iterdir()):
        raise ApplicationError(f"--out {out} exists and is not empty: give a new directory", field="out")
    if target.exists() and not overwrite:
        raise ApplicationError(f"{target} exists (pass --overwrite to replace it)", field="overwrite")
    began = time.perf_counter()
    # heavy: torch/transformers load only when exporting
    from transformers import AutoModel, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(model_path, local_files_only=True)
    model = AutoModel.from_pretrained(model_path, local_files_only=True).float().eval()
    limit = getattr(model.config, "max_position_embeddings", None)
    max_length = min(pipeline.max_seq_length, limit) if isinstance(limit, int) and limit > 0 \
        else pipeline.max_seq_length
    sentences = [*SAMPLES, _long_sample(max_length + 16)]
    with tempfile.TemporaryDirectory(prefix="export-onnx-") as work:
        staged = Path(work) / "model"
        staged.mkdir()
        for name in ("config.json", TOKENIZER_FILE, "tokenizer_config.json"):
            if (model_path / name).is_file():
                shutil.copy(model_path / name, staged / name)
        (staged / ONNX_FILE).parent.mkdir(parents=True)
        inputs = _export_graph(model, tokenizer, staged / ONNX_FILE, opset)
        expected = _torch_embeddings(model, tokenizer, sentences, max_length, pipeline.normalize)
        encoder = OnnxEncoder(staged, pipeline, threads=1)
        got = encoder.embed_ids(encoder.tokenize(sentences))
        difference = float(np.max(np.abs(got - expected))) if got.shape == expected.shape else float("inf")
        if not difference <= tolerance:
            raise ApplicationError(f"the exported graph's embeddings differ from torch's by up to {difference:.3g} "
                                   f"(tolerance {tolerance:g}) on {len(sentences)} sample sentences: not written")
        if out is not None:
            _copy_model(model_path, out)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(staged / ONNX_FILE, target.with_suffix(".onnx.part"))
        target.with_suffix(".onnx.part").replace(target)
    return {"model": str(model_path), "onnx": str(target), "model_dir": str(home), "inputs": inputs,
            "max_abs_diff": difference, "tolerance": tolerance, "sentences": len(sentences),
            "bytes": target.stat().st_size, "seconds": round(time.perf_counter() - began, 2)}
