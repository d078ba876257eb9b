"""Writing telemetry of free-text answers: what the participant page measured while a rewrite was written, counts
and durations only, never the keys typed (annotation/static/annotation/telemetry.js sends it with the answer).

Two steps, both on the general answer path (the hot path returns None for an answer carrying telemetry):

- `telemetry_parse`: the shape. A malformed or oversized block (an unknown or missing field, a wrong type, a
  number out of range, too many events, more than MAX_BYTES) is refused with a 400 naming the field, before
  anything is stored. A missing block (old clients, the HTTP API) is allowed: the answer is stored with status
  "none" ("no telemetry").
- `telemetry_check`: the consistency with what the server knows. Telemetry is evidence, not proof: characters typed
  plus pasted must cover the text, every duration must fit in the time the server measured between serving the
  item and receiving the answer, and the totals must cover the events listed. Physical bounds from above too:
  keys and typed characters at most a ceiling rate over the time on the item (the page's, never more than the
  server's), and what was typed or pasted and not deleted at most the text's length (the page counts a selection
  that typing or a paste replaced as deleted, so the text is exactly typed + pasted - deleted). A block that does not
  hold is stored marked "inconsistent" with the problems found, each naming the bound it broke, which is itself a
  writing signal (a client that forges it).

The times the page reports are offsets from the moment it drew the item; the server places them on its own clock
from `Response.shown_at` (when `next` served the item) and `answered_at`, so the record says when the first key
and the submit happened in the server's time, and a page cannot claim more time than the server saw.
"""
from __future__ import annotations

import json
from datetime import datetime, timedelta
from typing import Any

from django.utils.translation import gettext_noop

from annotation.models import ItemKind, TelemetryStatus
from core.error_codes import INVALID
from core.errors import ApplicationError

# Item kinds whose answer is text the participant writes: the ones writing telemetry is recorded for.
FREE_TEXT_KINDS = (ItemKind.REWRITE,)
# What the consent screen of a study with free-text answers says about it (templates/annotation/study.html).
CONSENT_NOTICE = gettext_noop(  # translated where shown (consent.consent_statement_parts)
    "While you write, this page records how you write, as counts and durations only: how many keys you press and "
    "how many characters you delete, type and paste (and whether a paste is a piece of the original sentence), the "
    "time until your first key and until you submit, your typing time, and how often and how long the page is in the "
    "background. It never records which keys you press or what you paste. Reviewers use these counts to check that "
    "the rewrites were written by people."
)

VERSION = 1
MAX_BYTES = 8192  # serialized; the participant body limit (32 KiB, a 413) is the outer bound
MAX_EVENTS = 50  # listed pastes and focus losses each; the page keeps counting past them in the totals
MAX_COUNT = 1_000_000
MAX_MS = 24 * 3600 * 1000
# The page draws the item a little after the server served it and submits a little before the server stores the
# answer, so its durations fit inside the server's; the slack covers clock-rate differences and rounding.
SLACK_MS = 1000
SLACK_RATE = 0.02
# Rates no person sustains over the time on an item (which includes reading the source). Typing: the fastest
# sustained typist on record, Barbara Blackburn, held 150 words a minute for 50 minutes with peaks of 212 (Guinness;
# about 18 characters a second at five characters a word), and the fastest of 168,000 volunteers typed about 120
# (Dhakal et al., "Observations on typing from 136 million keystrokes", CHI 2018): 25 characters a second (300 words
# a minute) is well above both. Keys: a held key repeats at most about 30 times a second at the fastest settings of
# Windows and macOS, so 35 keys a second. BURST_CHARS: what arrives at once without that many keys (an
# autocorrected word, a phone keyboard's suggestion).
MAX_TYPED_CHARS_PER_SECOND = 25
MAX_KEYSTROKES_PER_SECOND = 35
BURST_CHARS = 10
# Whitespace the page trims from the text's ends and line endings: what typed + pasted - deleted may exceed the
# stored text by.
TEXT_SLACK_CHARS = 20

COUNTS = ("keystrokes", "deletions", "typed_chars", "deleted_chars", "pasted_chars", "paste_count",
          "focus_loss_count")
DURATIONS = ("submit_ms", "active_ms", "focus_loss_ms")
FIELDS = {"version", *COUNTS, *DURATIONS, "first_key_ms", "pastes", "focus_losses"}
PASTE_FIELDS = {"at_ms": "duration", "chars": "count", "matched_source": "bool"}
FOCUS_FIELDS = {"at_ms": "duration", "ms": "duration", "next_insert_chars": "count",
                "next_insert_after_ms": "optional duration"}


def _bad(field: str, message: str) -> ApplicationError:
    return ApplicationError(f"telemetry: {field} {message}", code=INVALID, status=400,
                            details={"telemetry": [f"{field}: {message}"]})


def _number(value: Any, field: str, *, limit: int, optional: bool = False) -> int | None:
    if value is None and optional:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= limit:
        raise _bad(field, f"must be a whole number from 0 to {limit}.")
    return value


def _events(value: Any, field: str, shape: dict[str, str]) -> list[dict[str, Any]]:
    if not isinstance(value, list):
        raise _bad(field, "must be a list.")
    if len(value) > MAX_EVENTS:
        raise _bad(field, f"lists at most {MAX_EVENTS} events, got {len(value)}.")
    events = []
    for n, event in enumerate(value):
        where = f"{field}[{n}]"
        if not isinstance(event, dict) or set(event) != set(shape):
            raise _bad(where, f"must be an object with exactly {sorted(shape)}.")
        parsed: dict[str, Any] = {}
        for key, kind in shape.items():
            if kind == "bool":
                if not isinstance(event[key], bool):
                    raise _bad(f"{where}.{key}", "must be true or false.")
                parsed[key] = event[key]
            else:
                limit = MAX_COUNT if kind == "count" else MAX_MS
                parsed[key] = _number(event[key], f"{where}.{key}", limit=limit, optional=kind.startswith("optional"))
        events.append(parsed)
    return events


def telemetry_parse(raw: Any) -> dict[str, Any] | None:
    """The telemetry block as stored, or None when the answer carries none; ApplicationError (400) when malformed
    or oversized. Only the fields below are accepted, so nothing else (the text typed, key names) is ever stored."""
    if raw is None:
        return None
    if not isinstance(raw, dict):
        raise _bad("block", "must be an object (or absent).")
    size = len(json.dumps(raw, separators=(",", ":"), ensure_ascii=False).encode())
    if size > MAX_BYTES:
        raise _bad("block", f"is {size} bytes; at most {MAX_BYTES} are accepted.")
    unknown, missing = set(raw) - FIELDS, FIELDS - set(raw)
    if unknown:
        raise _bad("block", f"has unknown field(s) {sorted(unknown)[:5]}; the fields are {sorted(FIELDS)}.")
    if missing:
        raise _bad("block", f"misses field(s) {sorted(missing)}.")
    if raw["version"] != VERSION or isinstance(raw["version"], bool):
        raise _bad("version", f"must be {VERSION}.")
    parsed: dict[str, Any] = {"version": VERSION}
    for field in COUNTS:
        parsed[field] = _number(raw[field], field, limit=MAX_COUNT)
    for field in DURATIONS:
        parsed[field] = _number(raw[field], field, limit=MAX_MS)
    parsed["first_key_ms"] = _number(raw["first_key_ms"], "first_key_ms", limit=MAX_MS, optional=True)
    parsed["pastes"] = _events(raw["pastes"], "pastes", PASTE_FIELDS)
    parsed["focus_losses"] = _events(raw["focus_losses"], "focus_losses", FOCUS_FIELDS)
    return parsed


def telemetry_check(*, telemetry: dict[str, Any], text: str, shown_at: datetime | None,
                    answered_at: datetime) -> tuple[dict[str, Any], str]:
    """The stored record (the page's block, the server's times, the problems found) and its status."""
    t = telemetry
    problems: list[str] = []
    server_ms = (answered_at - shown_at).total_seconds() * 1000 if shown_at else None
    covered = t["typed_chars"] + t["pasted_chars"]
    if covered < len(text):
        problems.append(f"{t['typed_chars']} characters typed and {t['pasted_chars']} pasted cannot make a text of "
                        f"{len(text)} characters")
    submit = t["submit_ms"]
    if server_ms is not None and submit > server_ms * (1 + SLACK_RATE) + SLACK_MS:
        problems.append(f"the page reports {submit / 1000:.1f} s on the item, the server measured "
                        f"{server_ms / 1000:.1f} s")
    if t["first_key_ms"] is not None and t["first_key_ms"] > submit:
        problems.append("the first key comes after the submit")
    if t["first_key_ms"] is None and t["typed_chars"]:
        problems.append("characters were typed but no first key time is given")
    if t["active_ms"] + t["focus_loss_ms"] > submit + SLACK_MS:
        problems.append(f"typing time ({t['active_ms'] / 1000:.1f} s) and time away from the page "
                        f"({t['focus_loss_ms'] / 1000:.1f} s) add up to more than the time on the item")
    if len(t["pastes"]) > t["paste_count"] or sum(p["chars"] for p in t["pastes"]) > t["pasted_chars"]:
        problems.append("the listed pastes exceed the paste totals")
    if (len(t["focus_losses"]) > t["focus_loss_count"]
            or sum(f["ms"] for f in t["focus_losses"]) > t["focus_loss_ms"]):
        problems.append("the listed focus losses exceed the focus-loss totals")
    if any(e["at_ms"] > submit for e in [*t["pastes"], *t["focus_losses"]]):
        problems.append("an event is timed after the submit")
    problems += _rate_bounds(t, server_ms) + _text_bounds(t, text)
    first_key_at = None
    if shown_at is not None and t["first_key_ms"] is not None:
        first_key_at = min(shown_at + timedelta(milliseconds=t["first_key_ms"]), answered_at)
    record = {
        "page": t,
        "server": {"shown_at": shown_at.isoformat() if shown_at else None, "answered_at": answered_at.isoformat(),
                   "seconds": round(server_ms / 1000, 3) if server_ms is not None else None,
                   "first_key_at": first_key_at.isoformat() if first_key_at else None,
                   "text_chars": len(text)},
        "problems": problems,
    }
    return record, TelemetryStatus.INCONSISTENT if problems else TelemetryStatus.CONSISTENT


def _rate_bounds(t: dict[str, Any], server_ms: float | None) -> list[str]:
    """Keys and typed characters over the time on the item: the page's submit time, or the server's if shorter."""
    seconds = min(t["submit_ms"], server_ms) / 1000 if server_ms is not None else t["submit_ms"] / 1000
    problems = []
    for field, words, ceiling in (("keystrokes", "keys pressed", MAX_KEYSTROKES_PER_SECOND),
                                  ("typed_chars", "characters typed", MAX_TYPED_CHARS_PER_SECOND)):
        if t[field] > ceiling * seconds + BURST_CHARS:
            problems.append(f"typing-rate bound: {t[field]} {words} in {seconds:.1f} s on the item is "
                            f"{t[field] / max(seconds, 0.001):.0f} per second, above the {ceiling} per second "
                            "no person sustains")
    return problems


def _text_bounds(t: dict[str, Any], text: str) -> list[str]:
    """What was pasted, and typed plus pasted, and not deleted, against the text's length as the page counts it
    (UTF-16 code units, as a browser's text box does)."""
    length = len(text.encode("utf-16-le")) // 2
    bound = length + TEXT_SLACK_CHARS
    kept_pasted = t["pasted_chars"] - t["deleted_chars"]
    kept = t["typed_chars"] + kept_pasted
    if kept_pasted > bound:
        return [f"paste bound: {t['pasted_chars']} characters pasted and {t['deleted_chars']} deleted leave "
                f"{kept_pasted}, more than the text's {length} characters"]
    if kept > bound:
        return [f"text-length bound: {t['typed_chars']} characters typed and {t['pasted_chars']} pasted, "
                f"{t['deleted_chars']} deleted, leave {kept}, more than the text's {length} characters"]
    return []
