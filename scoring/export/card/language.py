"""The card's language section: the language of the data (the corpora's and the studies') and of the participants
(each study's language, and the platform's language filter when the draft recruited by one)."""
from __future__ import annotations

from typing import Any

from core.languages import language_english_name, primary_language
from platforms.selectors import study_recruitment_language
from scoring.export.card.context import CardContext


def _named(tag: str) -> dict[str, str]:
    return {"tag": tag, "name": language_english_name(primary_language(tag))}


def language_facts(ctx: CardContext) -> dict[str, Any]:
    data = sorted({c.language for c in ctx.corpora if c.language} | {s.language for s in ctx.studies if s.language})
    participants = []
    for study in ctx.studies:
        recruited = study_recruitment_language(study=study)
        participants.append({
            "study": study.slug, "study_language": _named(study.language or "en"),
            "platform": recruited["platform"] if recruited else None,
            "platform_filter": recruited.get("filter") if recruited else None,
            "recruitment": recruited.get("note", "") if recruited else
            "Not recruited through a platform draft of StyleCrowd: no language filter recorded.",
        })
    return {"data": [_named(tag) for tag in data], "participants": participants}


def language_markdown(facts: dict[str, Any]) -> list[str]:
    data = ", ".join(f"{d['name']} (`{d['tag']}`)" for d in facts["data"]) or "not recorded"
    lines = [f"Language of the data: {data}.", ""]
    if not facts["participants"]:
        return [*lines, "Participants: no study annotated these instances."]
    for p in facts["participants"]:
        language = p["study_language"]
        used = (f" Platform filter sent: `{p['platform_filter']['filter_id']}` = "
                f"{', '.join(p['platform_filter'].get('selected_values') or [])}." if p["platform_filter"] else "")
        lines.append(f"- Study `{p['study']}`: its pages were in {language['name']} (`{language['tag']}`); "
                     f"{p['recruitment']}{used}")
    return lines
