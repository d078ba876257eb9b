"""python manage.py model_cache [--clear [--model DIR]]: what the model cache holds (entries and bytes per model
and kind of output), or empty it (every entry, or one model directory's)."""
from __future__ import annotations

from pathlib import Path
from typing import Any

from core.commands import JsonCommand
from core.errors import ApplicationError
from scoring.model_cache.services import cache_clear, cache_summary, model_identity


class Command(JsonCommand):
    help = "Show the model cache (embeddings and token probabilities kept across runs), or clear it."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--clear", action="store_true", help="Delete the cached outputs.")
        parser.add_argument("--model", default=None, metavar="DIR",
                            help="With --clear: only those of this model directory (its current content).")

    def run(self, **options: Any) -> dict[str, Any]:
        if options["model"] and not options["clear"]:
            raise ApplicationError("--model goes with --clear (the summary lists every model).")
        if options["clear"]:
            identity = None
            if options["model"]:
                path = Path(options["model"]).expanduser()
                if not path.is_dir():
                    raise ApplicationError(f"--model: {path} is not a directory.")
                identity = model_identity(path=path)
            return {"deleted": cache_clear(identity=identity), "model_identity": identity}
        return cache_summary()
