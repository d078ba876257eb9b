"""python manage.py publish_benchmark --to huggingface --repo ORG/NAME [--export ID] [--private]

Uploads a hub export (export_benchmark --format hub) to a Hugging Face dataset repository with the token in HF_TOKEN
(and HF_ENDPOINT for another hub); the latest hub export unless --export names one."""
from __future__ import annotations

from typing import Any

from core.commands import JsonCommand
from core.error_codes import NOT_FOUND
from core.errors import ApplicationError
from scoring.export.publishing import HUBS, benchmark_publish
from scoring.models import BenchmarkExport


class Command(JsonCommand):
    help = "Publish a hub export to a Hugging Face dataset repository (token from HF_TOKEN)."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--to", dest="hub", required=True, choices=HUBS)
        parser.add_argument("--repo", required=True, help="ORG/NAME of the dataset repository (created if needed).")
        parser.add_argument("--export", type=int, default=None, help="The hub export's id (default: the latest).")
        parser.add_argument("--private", action="store_true", help="Create the repository private.")

    def run(self, **options: Any) -> dict[str, Any]:
        if options["export"]:
            export = BenchmarkExport.objects.filter(pk=options["export"]).first()
        else:
            export = BenchmarkExport.objects.filter(format=BenchmarkExport.Format.HUB).order_by("-created_at").first()
        if export is None:
            which = f"#{options['export']}" if options["export"] else "of the hub format"
            raise ApplicationError(f"No export {which}: write one with export_benchmark --format hub",
                                   code=NOT_FOUND, status=404, field="export")
        publication = benchmark_publish(export=export, hub=options["hub"], repo=options["repo"],
                                        private=options["private"], created_by="cli")
        return {"ok": True, "publication": publication.pk, "export": export.pk, "name": export.name,
                "version": export.version, "repo": publication.repo, "endpoint": publication.endpoint,
                "commit": publication.commit_oid, "url": publication.commit_url, "files": len(export.files)}
