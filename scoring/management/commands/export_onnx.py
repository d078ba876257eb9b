"""`manage.py export_onnx MODEL_DIR [--out DIR] [--tolerance 1e-5] [--overwrite] --json`: write a plain-shaped
sentence-transformers model's encoder as `onnx/model.onnx` (checked against torch first), so that `st:` runs it on
ONNX Runtime on CPU (scoring/model_scoring/onnx_export.py). MODEL_DIR may be `minilm` (the packaged
all-MiniLM-L6-v2, which needs `--out`: its directory is inside an installed package)."""
from __future__ import annotations

from pathlib import Path
from typing import Any

from core.commands import JsonCommand
from core.errors import ApplicationError
from scoring.model_scoring.neural import MODEL_ALIASES, model_path_resolve
from scoring.model_scoring.onnx_export import OPSET, TOLERANCE, onnx_export


class Command(JsonCommand):
    help = "Export a plain sentence-transformers model's encoder to MODEL_DIR/onnx/model.onnx (or a copy: --out)."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("model", help="The model directory (or 'minilm', the packaged all-MiniLM-L6-v2).")
        parser.add_argument("--out", default=None, help="Write a copy of the model directory here, with the graph "
                            "(default: the graph goes into the model directory itself).")
        parser.add_argument("--tolerance", type=float, default=TOLERANCE,
                            help="Largest absolute difference from torch's sentence embeddings allowed (default "
                                 "%(default)g).")
        parser.add_argument("--opset", type=int, default=OPSET, help="ONNX opset (default %(default)s).")
        parser.add_argument("--overwrite", action="store_true", help="Replace an existing onnx/model.onnx.")
        parser.add_argument("--json", action="store_true", help="Accepted for symmetry: the last line is JSON.")

    def run(self, **options: Any) -> dict[str, Any]:
        path = model_path_resolve(f"st:{options['model']}", options["model"])
        if options["model"] in MODEL_ALIASES and not options["out"]:
            raise ApplicationError(f"'{options['model']}' is a model inside an installed package: give --out DIR for "
                                   "a copy with the graph", field="out")
        out = Path(options["out"]).expanduser().resolve() if options["out"] else None
        return onnx_export(model_path=path, out=out, tolerance=options["tolerance"], opset=options["opset"],
                           overwrite=options["overwrite"])
