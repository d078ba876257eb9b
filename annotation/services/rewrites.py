"""Rewrite studies: sources read from a file or a corpus side, filtered as GYAFC filtered its
Yahoo Answers sentences, turned into a study of k rewrites per source with a target style, worked examples,
length limits, copy detection (rapidfuzz) and an optional persona questionnaire (PASTEL's attributes or the
researcher's own: annotation.services.persona_questions)."""
from __future__ import annotations

import dataclasses
import re
from collections import Counter
from pathlib import Path
from typing import Any

from django.db import transaction
from django.utils import translation
from django.utils.translation import gettext, gettext_noop
from rapidfuzz import fuzz

from annotation.models import COPY_THRESHOLD_DEFAULT, ItemKind, Participant, RewriteSettings, Study
from annotation.services.eligibility_default import eligibility_default
from annotation.services.persona_platform import (
    persona_from_platform_check,
    persona_from_platform_parse,
    persona_questions_mark,
)
from annotation.services.persona_questions import persona_questions_build
from annotation.services.studies import study_create
from annotation.services.study_settings import StudySettings, study_settings_build
from annotation.services.writing_signals.registry import auto_reject_validate, thresholds_validate
from core.error_codes import NOT_FOUND
from core.errors import ApplicationError
from core.languages import grapheme_count, is_question, primary_language, word_count
from tasks.models import Corpus, ParallelPair
from tasks.services.parsers import read_text, records_read

URL_RE = re.compile(r"(https?://|www\.)\S+", re.IGNORECASE)
DEFAULT_FILTERS: dict[str, Any] = {"questions": True, "urls": True, "min_words": 5, "max_words": 25}

# The worked examples of a formal or informal rewrite study whose researcher gave none: msgids, so a study in another
# language shows examples written in its own informal and formal registers (`default_examples`).
DEFAULT_EXAMPLES = {
    "formal": [{"source": gettext_noop("i'd say it is punk though."),
                "rewrite": gettext_noop("However, I do believe it to be punk."),
                "note": gettext_noop("Full words, capitalisation and punctuation; the opinion is kept.")},
               {"source": gettext_noop("gotta see both sides of the story lol"),
                "rewrite": gettext_noop("You have to consider both sides of the story."),
                "note": gettext_noop("Slang and 'lol' go; nothing is added.")}],
    "informal": [{"source": gettext_noop("However, I do believe it to be punk."),
                  "rewrite": gettext_noop("i'd say it's punk tho"),
                  "note": gettext_noop("Casual words and spelling; the opinion is kept.")}],
}


def default_examples(*, target_style: str, language: str = "en") -> list[dict[str, Any]]:
    """The default worked examples of a `target_style` (formal, informal; none for another), in `language`."""
    examples = DEFAULT_EXAMPLES.get(target_style.lower(), [])
    if primary_language(language) == "en":
        return examples
    with translation.override(language):
        return [{field: gettext(text) for field, text in example.items()} for example in examples]


def sources_read(*, path: str) -> list[tuple[str, str]]:
    """(id, text) from a text file (one source a line, ids line numbers), or CSV/TSV/JSONL with id and text."""
    file = Path(path)
    if not file.exists():
        raise ApplicationError(f"Sources: file {file} not found.", field="sources")
    text = read_text(file)
    rows: list[tuple[str, str]] = []
    if file.suffix.lower() in {".jsonl", ".ndjson", ".csv", ".tsv", ".tab"}:
        for number, record in records_read(file, text, required=("id", "text")):
            source_id = str(record.get("id") or "").strip()
            if not source_id:
                raise ApplicationError(f"{file}, line {number}: empty 'id'.", field="sources")
            rows.append((source_id, str(record.get("text") or "")))
    else:
        rows = [(str(n), line) for n, line in enumerate(text.splitlines(), start=1) if line.strip()]
    return sources_check(sources=rows, where=str(file))


def sources_check(*, sources: list[tuple[str, str]], where: str, field: str = "sources") -> list[tuple[str, str]]:
    """Sources need at least one row and unique ids (a file's, or the API body's)."""
    counts = Counter(source_id for source_id, _ in sources)
    repeated = sorted(source_id for source_id, n in counts.items() if n > 1)
    if repeated:
        raise ApplicationError(f"{where}: repeated ids {repeated[:5]}.", field=field)
    if not sources:
        raise ApplicationError(f"{where}: no sources.", field=field)
    return sources


def sources_from_corpus(*, name: str, side: int) -> list[tuple[str, str]]:
    if side not in (1, 2):
        raise ApplicationError(f"Side must be 1 or 2, not {side!r}.", field="side")
    corpus = Corpus.objects.filter(name=name).first()
    if corpus is None:
        raise ApplicationError(f"Sources corpus: no corpus named {name!r}.", code=NOT_FOUND, status=404,
                               field="sources_corpus")
    field = f"text_{side}"
    rows = [(str(source_id or pk), text) for pk, source_id, text in
            ParallelPair.objects.filter(corpus=corpus).order_by("pk").values_list("pk", "source_id", field)]
    if not rows:
        raise ApplicationError(f"corpus {name!r} has no pairs.")
    return rows


def corpus_language(*, name: str) -> str:
    """The BCP 47 language of the corpus named `name` (English when none is recorded)."""
    return Corpus.objects.filter(name=name).values_list("language", flat=True).first() or "en"


def sources_filter(*, sources: list[tuple[str, str]], filters: dict[str, Any],
                   language: str = "en") -> tuple[list[tuple[str, str]], dict[str, int]]:
    """GYAFC's preprocessing: drop questions, sentences with URLs, and sentences outside min…max words (and
    empty lines and repeated texts). Returns the kept sources and how many each rule dropped (first rule wins).
    Words and questions are the `language`'s (core.languages: ICU's word segmentation, every script's question
    marks), so a Japanese or Thai sentence has its words counted and `？`, `؟` or a Greek `;` make a question."""
    rules = {**DEFAULT_FILTERS, **filters}
    dropped = {"empty": 0, "duplicate": 0, "question": 0, "url": 0, "too_short": 0, "too_long": 0}
    kept: list[tuple[str, str]] = []
    seen: set[str] = set()
    for source_id, raw in sources:
        text = " ".join(raw.split())
        words = word_count(text, language=language)
        reason = ("empty" if not text else "duplicate" if text in seen
                  else "question" if rules["questions"] and is_question(text, language=language)
                  else "url" if rules["urls"] and URL_RE.search(text)
                  else "too_short" if rules["min_words"] and words < rules["min_words"]
                  else "too_long" if rules["max_words"] and words > rules["max_words"] else "")
        if reason:
            dropped[reason] += 1
            continue
        seen.add(text)
        kept.append((source_id, text))
    return kept, dropped


def persona_store(*, participant: Participant, study: Study, answers: dict[str, str]) -> None:
    """Keep the answers to the study's persona questions on the participant (called when they are answered)."""
    names = [q["name"] for q in study.eligibility_questions if q.get("persona")]
    if names:
        persona = {**participant.persona, **{n: answers[n] for n in names if n in answers}}
        Participant.objects.filter(pk=participant.pk).update(persona=persona)
        participant.persona = persona


def description_compose(*, target_style: str, examples: list[dict[str, Any]], min_length: int,
                        max_length: int, language: str = "en") -> str:
    """The instructions of a rewrite study whose researcher wrote none, in the study's `language` (its catalog)."""
    with translation.override(language):
        style = target_style or gettext("in the requested style")
        lines = [gettext("Rewrite each sentence so that it is %(style)s, keeping its meaning: change how it is said, "
                         "not what is said. Do not copy the sentence, do not add or drop information.")
                 % {"style": style},
                 gettext("Your rewrite must have %(minimum)d to %(maximum)d characters. Rewrites are reviewed; a "
                         "rejected rewrite comes back to you with the reason.") % {"minimum": min_length,
                                                                                    "maximum": max_length},
                 "", gettext("Examples:")]
        for example in examples:
            lines.append(gettext("Original: %(source)s") % {"source": example["source"]} + "\n"
                         + gettext("Rewrite: %(rewrite)s") % {"rewrite": example["rewrite"]}
                         + (f"\n({example['note']})" if example.get("note") else ""))
    return "\n".join(lines)


def copy_ratio(*, source: str, rewrite: str) -> float:
    """rapidfuzz's normalized similarity (0-100) of the rewrite to its source, case and spacing ignored."""
    return fuzz.ratio(" ".join(source.lower().split()), " ".join(rewrite.lower().split()))


def rewrite_check(*, shown: dict[str, Any], text: str) -> str | None:
    """The reason a rewrite is refused (too long, a copy of its source), or None. Called by `validate_answer`.
    Characters are user-perceived ones (graphemes), as a participant of any script counts them."""
    max_length = shown.get("max_length")
    length = grapheme_count(text, language=shown.get("language") or "en") if max_length else 0
    if max_length and length > max_length:
        return gettext("the rewrite may have at most %(maximum)d characters, got %(length)d.") % {
            "maximum": max_length, "length": length}
    threshold = shown.get("copy_threshold")
    source = (shown.get("texts") or {}).get("source", "")
    if threshold is not None and source and copy_ratio(source=source, rewrite=text) >= threshold:
        return gettext("the rewrite is (nearly) identical to the original: rewrite it in the target style.")
    return None


def rewrite_study_create(
    *, slug: str, sources: list[tuple[str, str]], target_style: str, filters: dict[str, Any] | None = None,
    examples: list[dict[str, Any]] | None = None, min_length: int = 10, max_length: int = 500,
    copy_threshold: float = COPY_THRESHOLD_DEFAULT, persona: list[str | dict[str, Any]] | None = None,
    persona_from_platform: str | list[str] = "", min_accepted: int = 0,
    min_rate: float = 0.0, signal_thresholds: dict[str, Any] | None = None, signal_auto_reject: Any = None,
    eligibility_questions: list[dict[str, Any]] | None = None, settings: StudySettings | None = None,
    study_status: str = Study.Status.ACTIVE, language: str = "en",
) -> tuple[Study, dict[str, Any]]:
    """A reviewed rewrite study: one item per kept source, k = `annotators_per_item` rewrites each (`settings`, a
    `StudySettings`; None: the defaults). Returns the study and the preprocessing summary (sources read, kept,
    dropped by rule). An empty task description is composed from the target style, examples and lengths.
    `persona_from_platform` names PASTEL attributes read from Prolific's demographics instead of asked (a Prolific
    study only); each is a persona attribute of the study whether or not `persona` names it. `language` (BCP 47, the
    sources') decides how words and questions are found and the default eligibility question's language."""
    if not 0 <= copy_threshold <= 100:
        raise ApplicationError(f"Copy threshold must be within 0…100, not {copy_threshold}.", field="copy_threshold")
    if not 1 <= min_length <= max_length <= 5000:
        raise ApplicationError(f"Rewrite length: need 1 ≤ min length ≤ max length ≤ 5000, "
                               f"not {min_length}…{max_length}.",
                               field="rewrite_min_length" if min_length < 1 or min_length > max_length
                               else "rewrite_max_length")
    if not 0 <= min_rate <= 1:
        raise ApplicationError(f"Qualify min rate must be within 0…1, not {min_rate}.", field="qualify_min_rate")
    if min_accepted < 0:
        raise ApplicationError(f"Qualify min accepted must be at least 0, not {min_accepted}.",
                               field="qualify_min_accepted")

    thresholds = thresholds_validate(signal_thresholds)
    auto_reject = auto_reject_validate(signal_auto_reject)
    examples = examples if examples is not None else default_examples(target_style=target_style, language=language)
    if not all(isinstance(e, dict) and e.get("source") and e.get("rewrite") for e in examples):
        raise ApplicationError("Examples: every example needs 'source' and 'rewrite'.", field="examples")
    rules = {**DEFAULT_FILTERS, **(filters or {})}
    kept, dropped = sources_filter(sources=sources, filters=rules, language=language)
    if not kept:
        raise ApplicationError(f"no source is left after the filters (dropped: {dropped}).")
    from_platform = persona_from_platform_parse(persona_from_platform)
    settings = settings or study_settings_build(item_kind=ItemKind.REWRITE)
    persona_from_platform_check(attributes=from_platform, platform=settings.platform)
    persona_qs = persona_questions_build(attributes=list(persona or []), language=language,
                                         read_from_platform=from_platform)
    persona_qs = persona_questions_mark(questions=persona_qs, attributes=from_platform, platform=settings.platform)
    base = eligibility_default(language=language) if eligibility_questions is None else eligibility_questions
    summary = {"sources_read": len(sources), "sources_kept": len(kept), "dropped": dropped, "filters": rules}
    items = [{"id": source_id, "source": text, "target_style": target_style, "max_length": max_length,
              "copy_threshold": copy_threshold, "language": language} for source_id, text in kept]
    with transaction.atomic():
        description = settings.task_description or description_compose(
            target_style=target_style, examples=examples, min_length=min_length, max_length=max_length,
            language=language)
        study = study_create(
            slug=slug, item_kind=ItemKind.REWRITE, items=items, rewrite_min_length=min_length,
            eligibility_questions=[*base, *persona_qs], study_status=study_status,
            settings=dataclasses.replace(settings, task_description=description),
        )
        RewriteSettings.objects.create(
            study=study, target_style=target_style, examples=examples, max_length=max_length,
            copy_threshold=copy_threshold, persona_questions=[q["name"] for q in persona_qs], filters=summary,
            qualification_min_accepted=min_accepted, qualification_min_rate=min_rate,
            signal_thresholds=thresholds, signal_auto_reject=auto_reject,
        )
    return study, summary
