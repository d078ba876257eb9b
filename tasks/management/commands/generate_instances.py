from typing import Any

from django.core.management.base import CommandParser

from core.commands import JsonCommand
from core.error_codes import NOT_FOUND
from core.errors import ApplicationError
from tasks.models import Corpus, Setup
from tasks.services.generation import instances_generate


class Command(JsonCommand):
    help = "Generate STEL task instances from a corpus: every pair anchors exactly one instance."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--corpus", required=True)
        parser.add_argument("--setup", required=True, choices=Setup.values)
        parser.add_argument("--count", type=int, help="Only this many instances (a seeded sample of anchors).")
        parser.add_argument("--seed", type=int, default=0)
        parser.add_argument("--replace", action="store_true", help="Replace this corpus's instances of the setup.")

    def run(self, **options: Any) -> dict[str, Any]:
        corpus = Corpus.objects.select_related("component").filter(name=options["corpus"]).first()
        if corpus is None:
            raise ApplicationError(f"no corpus named {options['corpus']!r}", code=NOT_FOUND, status=404)
        with self.progress_bar(f"generating {options['setup']} instances") as progress:
            run = instances_generate(corpus=corpus, setup=options["setup"], seed=options["seed"],
                                     count=options["count"], replace=options["replace"], progress=progress)
        by_order = {order: run.instances.filter(correct_order=order).count() for order in ("S1-S2", "S2-S1")}
        return {"corpus": corpus.name, "component": corpus.component.name, "setup": run.setup, "seed": run.seed,
                "count": run.count, "generation_run_id": run.pk, "instances": run.n_instances, "by_label": by_order}
