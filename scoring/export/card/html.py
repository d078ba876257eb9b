"""The card rendered for the admin (the export's page and its job's page), from the Markdown written beside it."""
from __future__ import annotations

from pathlib import Path
from typing import Any

from django.urls import reverse
from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString, mark_safe

from core.permissions import user_may
from scoring.erasures import erasures_fields
from scoring.export.formats import EXPORT_FORMATS, card_paths
from scoring.export.jobs import export_downloads
from scoring.models import BenchmarkExport


def _front_matter_stripped(text: str) -> str:
    if text.startswith("---\n"):
        end = text.find("\n---\n", 4)
        if end != -1:
            return text[end + 5:]
    return text


def markdown_html(text: str) -> SafeString:
    """CommonMark with raw HTML off: researchers' texts (instructions, consent) are shown, never run."""
    # heavy: the Markdown renderer loads only when a card is rendered
    from markdown_it import MarkdownIt

    return mark_safe(MarkdownIt("commonmark", {"html": False}).enable("table").render(text))  # noqa: S308


def export_card_html(*, export: BenchmarkExport) -> SafeString:
    folder = EXPORT_FORMATS[export.format].folder if export.format in EXPORT_FORMATS else False
    path = card_paths(Path(export.path), folder=folder)[1]
    if not path.is_file():
        return format_html("<p>The card is no longer on the server.</p>")
    note = erasures_fields(export)["erasures_note"]
    return format_html('{}<div class="dataset-card">{}</div>',
                       format_html('<p class="errornote erasures-note">{}</p>', note) if note else "",
                       markdown_html(_front_matter_stripped(path.read_text(encoding="utf-8"))))


def export_job_panel(*, job: Any, user: Any) -> SafeString | None:
    """The export job's page: its downloads (the hub folder as a zip) and the card, for users who may view exports."""

    export_id = (job.result or {}).get("export")
    if not isinstance(export_id, int) or not user_may(user, BenchmarkExport, "view"):
        return None
    export = BenchmarkExport.objects.filter(pk=export_id).first()
    if export is None:
        return None
    links = format_html_join(" · ", '<a href="{}" class="download-{}">{}</a>', (
        (reverse("admin:scoring_benchmarkexport_download", args=[export.pk, which]), which,
         {"zip": "the folder as a zip", "data": "data file", "card": "card (JSON)", "card-md": "card (Markdown)",
          "croissant": "croissant.json"}[which]) for which in export_downloads(export)))
    return format_html('<h2>{} {}: {}</h2><p class="export-downloads">Download: {}</p><p>{}</p>{}', export.name,
                       export.version, export.get_format_display(), links, export.changelog.get("summary", ""),
                       export_card_html(export=export))
