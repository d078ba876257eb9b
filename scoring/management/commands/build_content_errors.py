"""python manage.py build_content_errors --name SET (--pairs FILE | --corpus NAME [--source-side 1|2])
[--types substitution,deletion,fabrication] [--seed N] [--model DIR] [--language TAG] [--study SLUG]"""
from __future__ import annotations

from typing import Any

from core.commands import JsonCommand
from core.error_codes import NOT_FOUND
from core.errors import ApplicationError
from scoring.content_errors.editors import ERROR_TYPES
from scoring.content_errors.pairs import corpus_language, pairs_from_corpus, pairs_read
from scoring.content_errors.services import content_error_set_build, content_error_study_create
from scoring.error_codes import INVALID_ARGUMENTS
from scoring.models import ContentErrorSet


class Command(JsonCommand):
    help = ("Make the paired rewrite with a content error (Pauli et al. 2025) for (source, good rewrite) pairs; the "
            "errors wait for review in the admin. With --study (and an existing --name), make the rating study "
            "from the accepted ones. Last line: the JSON summary.")

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--name", required=True, help="Name (slug) of the content-error set.")
        parser.add_argument("--pairs", help="CSV/TSV/JSONL with id, source, rewrite[, target_style].")
        parser.add_argument("--corpus", help="A stored corpus instead of a file.")
        parser.add_argument("--source-side", type=int, default=1, help="Corpus side used as the source (1 or 2).")
        parser.add_argument("--types", default=",".join(ERROR_TYPES), help="Comma-separated error types.")
        parser.add_argument("--seed", type=int, default=0)
        parser.add_argument("--model", default="", help="Directory of a local causal LM (no downloads).")
        parser.add_argument("--language", default="", help="BCP 47 tag of the texts (default: the corpus's, or en "
                            "for a file); the rule-based editors are English only.")
        parser.add_argument("--study", default="", help="Create the rating study SLUG from the accepted errors.")
        parser.add_argument("--annotators-per-item", type=int, default=3)

    def run(self, **options: Any) -> dict[str, Any]:
        if options["study"]:
            error_set = ContentErrorSet.objects.filter(name=options["name"]).first()
            if error_set is None:
                raise ApplicationError(f"content-error set {options['name']!r} not found", code=NOT_FOUND)
            study = content_error_study_create(error_set=error_set, slug=options["study"],
                                               annotators_per_item=options["annotators_per_item"])
            return {"set": error_set.name, "study": study.slug, "items": study.items.count(),
                    "questions": [q["name"] for q in study.questions]}
        if bool(options["pairs"]) == bool(options["corpus"]):
            raise ApplicationError("give exactly one of --pairs FILE or --corpus NAME", code=INVALID_ARGUMENTS)
        if options["pairs"]:
            pairs, source = pairs_read(path=options["pairs"]), options["pairs"]
            language = options["language"] or "en"
        else:
            pairs = pairs_from_corpus(name=options["corpus"], source_side=options["source_side"])
            source = f"corpus:{options['corpus']}"
            language = options["language"] or corpus_language(name=options["corpus"])
        types = [t.strip() for t in options["types"].split(",") if t.strip()]
        with self.progress_bar("content errors") as progress:
            error_set = content_error_set_build(name=options["name"], pairs=pairs, source=source, error_types=types,
                                                seed=options["seed"], model_path=options["model"],
                                                created_by="cli", language=language, progress=progress)
        return {"set": error_set.name, "generator": error_set.generator, "seed": error_set.seed,
                **error_set.summary}
