"""create_study's options for reviewed rewrite studies (`--kind rewrite --sources FILE`): parsed here, created by
`annotation.services.rewrites.rewrite_study_create`."""
from __future__ import annotations

import argparse
from typing import Any

from annotation.services.rewrite_settings import REWRITE_BY_NAME, REWRITE_DEFAULTS
from annotation.services.rewrites import sources_read
from annotation.services.writing_signals.registry import thresholds_parse
from core.commands import json_file_read


def rewrite_arguments_add(parser: Any) -> None:
    group = parser.add_argument_group("rewrite studies (--kind rewrite)")
    group.add_argument("--sources", help="Sources: a text file (one a line) or CSV/TSV/JSONL with id and text.")
    group.add_argument("--sources-corpus", help="Sources from one side of a corpus (with --side).")
    group.add_argument("--side", type=int, choices=[1, 2], help="The corpus side the sources are taken from.")
    group.add_argument("--target-style", default="", help="The style to rewrite into, e.g. formal.")
    group.add_argument("--examples", help="JSON list of worked examples {source, rewrite, note}.")
    group.add_argument("--rewrite-max-length", type=int, default=REWRITE_DEFAULTS["max_length"])
    group.add_argument("--copy-threshold", type=float, default=REWRITE_DEFAULTS["copy_threshold"],
                       help="Refuse a rewrite whose rapidfuzz ratio with its source (0-100) is at least this.")
    group.add_argument("--persona", default="",
                       help="Persona questions asked before writing (PASTEL): attributes comma-separated (ethnicity "
                            "names its list: ethnicity=prolific, or ethnicity=pastel in an English study), 'pastel' "
                            "for all, or a JSON file of own questions [{name, text, choices}], a choice a value or "
                            "{value, label}.")
    from_platform = REWRITE_BY_NAME["persona_from_platform"]
    group.add_argument(from_platform.flag, default=from_platform.default, help=from_platform.help)
    group.add_argument("--filter-questions", action=argparse.BooleanOptionalAction, default=True)
    group.add_argument("--filter-urls", action=argparse.BooleanOptionalAction, default=True)
    group.add_argument("--min-words", type=int, default=REWRITE_DEFAULTS["min_words"],
                       help="Drop sources with fewer words (0: no limit).")
    group.add_argument("--max-words", type=int, default=REWRITE_DEFAULTS["max_words"],
                       help="Drop sources with more words (0: no limit).")
    group.add_argument("--qualify-min-accepted", type=int, default=REWRITE_DEFAULTS["min_accepted"],
                       help="Admit only writers with at least this many accepted rewrites in earlier studies.")
    group.add_argument("--qualify-min-rate", type=float, default=REWRITE_DEFAULTS["min_rate"],
                       help="… and at least this acceptance rate (0-1), e.g. 1.0 for GYAFC's experts.")
    group.add_argument("--signal-threshold", action="append", default=[], metavar="NAME=VALUE",
                       help="A writing signal's threshold (off: switched off); repeat for several.")
    group.add_argument("--auto-reject", default="", metavar="SIGNAL,…",
                       help="Writing signals whose flag rejects a pending rewrite without a reviewer (default: none).")


def rewrite_spec_from_options(options: dict[str, Any]) -> dict[str, Any]:
    """The `rewrite` argument of study_build from create_study's options (files read here, checked there)."""
    sources = sources_read(path=options["sources"]) if options["sources"] else None
    examples = None
    if options["examples"]:
        examples = json_file_read(options["examples"], "--examples", expect_list="examples")
    persona: list[Any] = [a.strip() for a in options["persona"].split(",") if a.strip()]
    if options["persona"].endswith(".json"):
        persona = json_file_read(options["persona"], "--persona", expect_list="questions {name, text, choices}")
    return {
        "sources": sources, "sources_corpus": options["sources_corpus"] or "", "side": options["side"],
        "target_style": options["target_style"], "examples": examples,
        "filters": {"questions": options["filter_questions"], "urls": options["filter_urls"],
                    "min_words": options["min_words"], "max_words": options["max_words"]},
        "min_length": options["rewrite_min_length"], "max_length": options["rewrite_max_length"],
        "copy_threshold": options["copy_threshold"], "persona": persona,
        "persona_from_platform": options["persona_from_platform"],
        "min_accepted": options["qualify_min_accepted"],
        "min_rate": options["qualify_min_rate"],
        "signal_thresholds": thresholds_parse(options["signal_threshold"], field="signal_threshold"),
        "signal_auto_reject": options["auto_reject"],
    }
