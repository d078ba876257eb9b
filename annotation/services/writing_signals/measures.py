"""The measurements behind the writing signals, without database access: each takes what was stored with a rewrite
(its text, its telemetry record, other writers' rewrites of the same source) and returns the score with its
evidence in plain words, or None where the signal cannot be measured (no telemetry, too little typing)."""
from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from annotation.services.writing_signals.registry import (
    FOCUS_INSERT_WINDOW_MS,
    NEAR_DUPLICATE_MIN_CHARS,
    TYPING_MIN_CHARS,
)

MAX_SPEED = 1000.0  # characters per second reported for text "typed" in no measurable time


@dataclass
class Measure:
    score: float | None  # None: not measured on this rewrite (the evidence says why)
    evidence: str
    details: dict[str, Any] = field(default_factory=dict)
    eligible: bool = True  # False: measured, but never flags (too short to judge), or not measured


class NoModelRewrite(Exception):
    """A model rewriter has no text for this source (the model declined, replied nothing, or did not answer in
    time): the model-similarity signal is not measured on its rewrites. The message says why, in plain words."""


def normalize(text: str) -> str:
    """Case and spacing ignored, as the copy check does (services/rewrites.copy_ratio)."""
    return " ".join(text.lower().split())


def telemetry_inconsistent(record: dict[str, Any]) -> Measure:
    problems = record.get("problems") or []
    if not problems:
        return Measure(0, "telemetry consistent with the text and the server's clock")
    return Measure(len(problems), "telemetry inconsistent: " + "; ".join(problems), {"problems": problems})


def mostly_pasted(record: dict[str, Any]) -> Measure:
    """The share of the text pasted from outside the page: pastes that were not a piece of the original, and pastes
    beyond the listed ones (their origin unknown), over the text's length."""
    page = record["page"]
    length = max(record["server"]["text_chars"], 1)
    listed = page["pastes"]
    outside = sum(p["chars"] for p in listed if not p["matched_source"])
    unlisted = max(page["pasted_chars"] - sum(p["chars"] for p in listed), 0)
    of_source = sum(p["chars"] for p in listed if p["matched_source"])
    share = min((outside + unlisted) / length, 1.0)
    words = (f"{share:.0%} of the text's {length} characters pasted from outside the page "
             f"({page['paste_count']} paste(s), {page['pasted_chars']} characters")
    words += f"; {of_source} of them pasted from the original)" if of_source else ")"
    if not page["paste_count"]:
        words = f"nothing pasted; {page['typed_chars']} characters typed"
    return Measure(round(share, 4), words, {"outside_chars": outside + unlisted, "source_chars": of_source,
                                            "text_chars": length})


def typing_speed(record: dict[str, Any]) -> Measure | None:
    """Characters typed per second of typing, and the server's bound (characters typed over the time the server
    measured on the item, which a page cannot shorten): the larger of the two."""
    page = record["page"]
    typed = page["typed_chars"]
    if typed < TYPING_MIN_CHARS:
        return None
    active = page["active_ms"] / 1000
    client = typed / active if active > 0 else MAX_SPEED
    seconds = record["server"]["seconds"]
    bound = typed / seconds if seconds else MAX_SPEED
    speed = min(max(client, bound), MAX_SPEED)
    words = (f"typed {typed} characters in {active:.1f} s of typing: {client:.1f} characters per second"
             if active > 0 else f"typed {typed} characters with no typing time measured")
    if bound > client:
        words += f"; at least {bound:.1f} per second over the {seconds:.1f} s the server measured"
    return Measure(round(speed, 2), words, {"typed_chars": typed, "active_s": active, "server_s": seconds,
                                            "client_speed": round(client, 2), "server_bound": round(bound, 2)})


def focus_loss_insert(record: dict[str, Any], *, min_chars: float) -> Measure:
    """The longest time away from the page that was followed, within 30 s of coming back, by an insertion of at
    least `min_chars` characters at once (a paste, a drop, text set by a program)."""
    page = record["page"]
    qualifying = [f for f in page["focus_losses"] if f["next_insert_chars"] >= min_chars
                  and f["next_insert_after_ms"] is not None and f["next_insert_after_ms"] <= FOCUS_INSERT_WINDOW_MS]
    if not qualifying:
        longest = max((f["ms"] for f in page["focus_losses"]), default=0) / 1000
        words = (f"away from the page {page['focus_loss_count']} time(s), {page['focus_loss_ms'] / 1000:.0f} s in "
                 f"all (longest {longest:.0f} s); no large insertion right after") if page["focus_loss_count"] \
            else "never away from the page"
        return Measure(0, words, {"focus_loss_count": page["focus_loss_count"]})
    worst = max(qualifying, key=lambda f: f["ms"])
    return Measure(round(worst["ms"] / 1000, 1),
                   f"away from the page for {worst['ms'] / 1000:.0f} s, then {worst['next_insert_chars']} characters "
                   f"inserted at once {worst['next_insert_after_ms'] / 1000:.0f} s after coming back",
                   {"away_ms": worst["ms"], "inserted_chars": worst["next_insert_chars"]})


def near_duplicates(rewrites: Sequence[tuple[int, str, str, Any]], *,
                    similarity: Callable[[list[str]], Any]) -> dict[int, Measure]:
    """For the rewrites of one source, as (response id, writer, text, answered_at): each one's highest similarity
    (0-100) with another writer's. Only the later of an alike pair can flag (the earlier may be the original a
    copier took), and only rewrites of at least NEAR_DUPLICATE_MIN_CHARS characters."""
    out: dict[int, Measure] = {}
    if len(rewrites) < 2:
        for response_id, *_ in rewrites:
            out[response_id] = Measure(0, "no other writer's rewrite of this source yet")
        return out
    matrix = similarity([normalize(text) for _, _, text, _ in rewrites])
    for i, (response_id, writer, text, at) in enumerate(rewrites):
        others = [j for j, other in enumerate(rewrites) if other[1] != writer]
        if not others:
            out[response_id] = Measure(0, "no other writer's rewrite of this source yet")
            continue
        j = max(others, key=lambda j: float(matrix[i][j]))
        score = round(float(matrix[i][j]), 1)
        other_id, other_writer, _, other_at = rewrites[j]
        later = (at, response_id) > (other_at, other_id)
        words = f"{score:.0f}% alike with rewrite #{other_id} by {other_writer}"
        words += ", written after it" if later else ", written before it (the later one carries the flag)"
        eligible = later and len(normalize(text)) >= NEAR_DUPLICATE_MIN_CHARS
        out[response_id] = Measure(score, words, {"other_response": other_id, "other_writer": other_writer,
                                                  "later": later}, eligible=eligible)
    return out


def char_similarity(texts: list[str]) -> Any:
    """rapidfuzz's normalized Indel similarity (0-100) of every pair of texts."""
    # heavy: rapidfuzz loads only when edit distances are computed
    from rapidfuzz import fuzz, process

    return process.cdist(texts, texts, scorer=fuzz.ratio)


def model_similarity(*, text: str, model_text: str, model: str) -> Measure:
    """rapidfuzz's normalized Indel similarity (0-100) of a rewrite with the model's own rewrite of its source; the
    evidence quotes the model's text so that a reviewer can compare the two."""
    # heavy: rapidfuzz loads only when edit distances are computed
    from rapidfuzz import fuzz

    score = round(fuzz.ratio(normalize(text), normalize(model_text)), 1)
    shown = model_text if len(model_text) <= 300 else model_text[:299] + "…"
    return Measure(score, f"{score:.0f}% alike with {model}'s own rewrite of this source: \"{shown}\"",
                   {"model_rewrite": model_text[:500], "model": model})


def model_similarity_missing(*, model: str, reason: str) -> Measure:
    """The signal on a rewrite whose source the model gave no rewrite of: not measured, never flags."""
    return Measure(None, f"not measured: {model} gave no rewrite of this source ({reason})"[:500],
                   {"model": model, "not_measured": reason[:300]}, eligible=False)


def llm_likeness(*, log_ppl: float, entropy: float, model: str) -> Measure:
    ratio = log_ppl / entropy if entropy > 0 else 0.0
    return Measure(round(ratio, 4), f"log-perplexity {log_ppl:.2f} over mean entropy {entropy:.2f} under {model}: "
                   f"{ratio:.2f} (the lower, the more predictable the text is to the model)",
                   {"log_perplexity": round(log_ppl, 4), "mean_entropy": round(entropy, 4), "model": model})
