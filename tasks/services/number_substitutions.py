"""Number-substitution candidates: find sentences with "4ever", "d00d", "appreci8", review them, build a corpus.

Finding is deliberately generous (a researcher reviews every candidate in the admin and writes its translation);
the rules follow STEL's own finder (`src/utility/nsubs_possibilities.py` in github.com/nlpsoc/STEL, MIT) in spirit:
the seed list of appendix C.2, or a token mixing letters with the look-alike symbols 4 3 1 ! 0 7 5 (a e l i o t s)
or the sound symbols 8 2 ("gr8", "2day"), minus quantities, ordinals and product names.
"""
from __future__ import annotations

import csv
import re
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from django.db import transaction

from core.errors import ApplicationError
from tasks.error_codes import INVALID_STATUS, NOTHING_TO_STORE, PATH_TOO_LONG, UNCHANGED, UNTRANSLATED
from tasks.models import Corpus, NumberSubstitutionCandidate
from tasks.services.builders import text_lines_read
from tasks.services.imports import PairRow, component_get, corpus_store

FINDER_VERSION = "stel-c2/2026-11-21.1"

# STEL appendix C.2 seed list (NUMBER_SUB_DICT in STEL's nsubs_possibilities.py) with STEL's translations.
SEED_SUBSTITUTIONS: dict[str, str] = {
    "2morrow": "tomorrow", "c00l": "cool", "n!ce": "nice", "l0ve": "love", "sw33t": "sweet", "l00k": "look",
    "l33t": "leet", "1337": "leet", "0wn": "own", "0wn3d": "owned", "0wn4ge": "ownage", "t3h": "teh", "n00b": "noob",
    "d00dz": "dude", "d00d": "dude", "b00n": "boon", "ph34r": "fear", "c3n50red": "censored", "w00t": "woot",
    "p00nd": "pwn", "l4m3r": "lamer", "t00l": "tool", "0mg": "omg", "0mfg": "omfg", "sk1llz": "skills",
    "sk1ll": "skill", "sk1ll3d": "skilled", "m4d": "mad", "sp4wn": "spawn", "13wt": "loot", "j0": "jo", "j00": "joo",
    "m8": "mate", "m2": "me too", "gr8": "great", "b4": "before", "4ever": "forever", "2day": "today",
    "2nite": "tonight", "h8": "hate", "in2": "into", "sum1": "someone", "w8": "wait", "4u": "for you", "sk8r": "skater",
}
LOOKALIKES = {"4": "a", "3": "e", "1": "l", "!": "i", "0": "o", "7": "t", "5": "s"}
SOUND_SYMBOLS = {"8": "ate", "2": "to", "4": "for", "1": "one"}
SYMBOLS = set(LOOKALIKES) | set(SOUND_SYMBOLS)
# Tokens that mix letters and digits without substituting anything (after STEL's exclusion lists).
NOT_SUBSTITUTIONS = {
    "mp3", "mp4", "mp3s", "ps1", "ps2", "ps3", "ps4", "ps5", "3ds", "4chan", "co2", "h2o", "p2p", "b2b", "y2k",
    "ww1", "ww2", "ww3", "f1", "a4", "a1", "g7", "g20", "covid19", "ipv4", "wpa2", "utf8", "w3c", "r2d2", "c3po",
    "dota2", "tf2", "hl2", "cod4", "fifa12", "bo2", "bo3", "bo4", "bf4", "fo4", "gta5", "ak47", "mp5", "m4", "b12",
    "iphone4", "ipad2", "rav4", "4wd", "4x4", "3d", "2d", "4k", "5g", "4g", "3g", "h1b", "x1", "i5", "i7", "win7",
    "win10", "s7", "s10", "a380", "b52", "f150", "t1d", "h5n1", "k9", "l4d", "l4d2", "cs1", "e3", "w2", "1v1",
    "2v2", "5v5", "top10", "top5", "top3", "ff7", "re4", "ddr3", "ddr4", "usb3", "hdmi2", "mk2", "mk3", "x264",
}
QUANTITY_RE = re.compile(
    r"^\d+(?:st|nd|rd|th|s|'s|am|pm|k|m|km|kg|g|lb|lbs|mb|gb|tb|mm|cm|ft|hz|fps|mph|x|yo|mo|min|mins|hr|hrs|h|sec|"
    r"secs|d|p|v|w|px|ish|mg|ml|l|oz|in|yr|yrs|ers|er|day|days|ish)$"
)
SPLIT_RE = re.compile(r"[^\s/,;:()\[\]{}\"\u201c\u201d<>=+*~-]+")
EDGE_PUNCTUATION = ".,?!'\"\u2019\u2018*_~"


@dataclass
class TokenMatch:
    token: str
    rule: str  # "seed" (appendix C.2 list) or "pattern" (letters mixed with substitution symbols)
    suggestion: str = ""

    def as_dict(self) -> dict[str, str]:
        return {"token": self.token, "rule": self.rule, "suggestion": self.suggestion}


@dataclass
class CandidateLine:
    line_number: int
    text: str
    matches: list[TokenMatch]


@dataclass
class NsubsScan:
    """The result of scanning one file: the candidate lines and the counts of the summary."""

    path: Path
    n_lines: int
    n_blank: int
    candidates: list[CandidateLine] = field(default_factory=list)

    def summary(self) -> dict[str, Any]:
        tokens = Counter(m.token.lower() for c in self.candidates for m in c.matches)
        rules = Counter(m.rule for c in self.candidates for m in c.matches)
        non_blank = self.n_lines - self.n_blank
        return {
            "file": str(self.path), "lines": self.n_lines, "blank_lines": self.n_blank,
            "candidates": len(self.candidates),
            "candidate_ratio": round(len(self.candidates) / non_blank, 4) if non_blank else 0.0,
            "matched_tokens": sum(tokens.values()), "rules": dict(rules), "top_tokens": dict(tokens.most_common(15)),
            "finder_version": FINDER_VERSION,
        }


def _suggest(token: str) -> str:
    """A first guess for the reviewer: sound symbols read as sounds ("any1", "appreci8", "2day"), other symbols as
    the letters they look like ("d00d"), the seed list's own translation for its words."""
    lowered = token.lower()
    if lowered in SEED_SUBSTITUTIONS:
        return SEED_SUBSTITUTIONS[lowered]
    out = []
    for index, char in enumerate(token):
        between_letters = 0 < index < len(token) - 1 and token[index - 1].isalpha() and token[index + 1].isalpha()
        if char == "8" or (char == "2" and not between_letters):
            out.append(SOUND_SYMBOLS[char])
        elif char == "1" and index == len(token) - 1 and index > 0:
            out.append("one")  # "any1", "some1"
        elif char == "4" and index == 0:
            out.append("for")  # "4get"
        else:
            out.append(LOOKALIKES.get(char, char))
    return "".join(out)


def _is_pattern_substitution(core: str) -> bool:
    lowered = core.lower()
    letters = sum(char.isalpha() for char in core)
    symbols = [i for i, char in enumerate(core) if char in SYMBOLS]
    if not symbols or letters < 2 or lowered in NOT_SUBSTITUTIONS or QUANTITY_RE.match(lowered):
        return False
    if any(not (char.isalpha() or char in SYMBOLS or char in "'\u2019") for char in core):
        return False  # other digits or signs: "x86", "v1.2", "user_42"
    prefix = core[:len(symbols)]
    if symbols == list(range(len(symbols))) and prefix not in {"2", "4"}:
        return False  # a number before a word is a quantity ("10mins", "3days"); "2day", "4ever" are not
    suffix_start = len(core) - len(symbols)
    if symbols == list(range(suffix_start, len(core))) and len(symbols) > 1:
        return False  # trailing numbers are names and versions ("user42", "catch22")
    return True


def nsubs_tokens_find(*, text: str) -> list[TokenMatch]:
    """The tokens of `text` that look like number substitutions, in order."""
    matches: list[TokenMatch] = []
    for raw in SPLIT_RE.findall(text):
        core = raw.lstrip(".,?'\"\u2019\u2018*_~").rstrip(EDGE_PUNCTUATION)
        if not core:
            continue
        if core.lower() in SEED_SUBSTITUTIONS:
            matches.append(TokenMatch(core, "seed", _suggest(core)))
        elif _is_pattern_substitution(core):
            matches.append(TokenMatch(core, "pattern", _suggest(core)))
    return matches


def nsubs_file_scan(*, path: str | Path, progress: Callable[[int, int], None] | None = None) -> NsubsScan:
    """Scan a UTF-8 text file (one sentence a line) for number-substitution candidates."""
    lines = text_lines_read(path=path)
    scan = NsubsScan(path=Path(path), n_lines=len(lines), n_blank=sum(1 for line in lines if not line.strip()))
    for number, line in enumerate(lines, start=1):
        if progress and (number % 1000 == 0 or number == len(lines)):
            progress(number, len(lines))
        matches = nsubs_tokens_find(text=line)
        if matches:
            scan.candidates.append(CandidateLine(number, line.strip(), matches))
    return scan


TSV_HEADER = ["line", "text", "matched_tokens", "suggestions", "rules"]


def nsubs_candidates_write_tsv(*, scan: NsubsScan, out: Any) -> None:
    """Write the candidates as TSV to the text stream `out` (one row a candidate sentence)."""
    writer = csv.writer(out, delimiter="\t", lineterminator="\n")
    writer.writerow(TSV_HEADER)
    for candidate in scan.candidates:
        writer.writerow([
            candidate.line_number, candidate.text, " ".join(m.token for m in candidate.matches),
            " ".join(m.suggestion for m in candidate.matches), " ".join(m.rule for m in candidate.matches),
        ])


@transaction.atomic
def nsubs_candidates_load(*, scan: NsubsScan) -> tuple[int, int]:
    """Store the candidates for review; lines already stored for this file are left as they are (idempotent).

    Returns (created, already_stored).
    """
    source_file = str(scan.path.resolve())
    if len(source_file) > 500:
        raise ApplicationError(f"{source_file}: path longer than 500 characters", code=PATH_TOO_LONG)
    existing = set(
        NumberSubstitutionCandidate.objects.filter(source_file=source_file).values_list("line_number", flat=True)
    )
    new = [
        NumberSubstitutionCandidate(
            text=c.text, matched_tokens=[m.as_dict() for m in c.matches], source_file=source_file,
            line_number=c.line_number,
        )
        for c in scan.candidates if c.line_number not in existing
    ]
    NumberSubstitutionCandidate.objects.bulk_create(new, batch_size=1000)
    return len(new), len(scan.candidates) - len(new)


@transaction.atomic
def nsubs_candidates_set_status(*, ids: Iterable[int], status: str) -> int:
    """Accept or reject candidates; accepting needs a translation that differs from the text."""
    if status not in NumberSubstitutionCandidate.Status.values:
        raise ApplicationError(f"unknown status {status!r}", code=INVALID_STATUS)
    candidates = NumberSubstitutionCandidate.objects.select_for_update().filter(pk__in=list(ids))
    if status == NumberSubstitutionCandidate.Status.ACCEPTED:
        _check_translated(candidates)
    return candidates.update(status=status)


def _check_translated(candidates: Iterable[NumberSubstitutionCandidate]) -> None:
    untranslated = [c for c in candidates if not c.translation.strip()]
    if untranslated:
        where = ", ".join(f"#{c.pk} ({c.source_file} line {c.line_number})" for c in untranslated[:10])
        raise ApplicationError(f"{len(untranslated)} candidate(s) have no translation: {where}", code=UNTRANSLATED)
    unchanged = [c for c in candidates if c.translation.strip() == c.text.strip()]
    if unchanged:
        where = ", ".join(f"#{c.pk} ({c.source_file} line {c.line_number})" for c in unchanged[:10])
        raise ApplicationError(
            f"{len(unchanged)} candidate(s) have a translation equal to the text: {where}", code=UNCHANGED
        )


def nsubs_corpus_build(*, name: str, ids: Iterable[int] | None = None, replace: bool = False) -> Corpus:
    """Store an `nbr_substitution` corpus from accepted candidates (all of them, or those of `ids`).

    Style 1 (plain) is the translation, style 2 (substituted) the original sentence.
    """
    queryset = NumberSubstitutionCandidate.objects.filter(status=NumberSubstitutionCandidate.Status.ACCEPTED)
    if ids is not None:
        queryset = queryset.filter(pk__in=list(ids))
    candidates = list(queryset.order_by("source_file", "line_number"))
    if not candidates:
        raise ApplicationError("no accepted candidates to build a corpus from", code=NOTHING_TO_STORE)
    _check_translated(candidates)
    files = sorted({c.source_file for c in candidates})
    pairs = [
        PairRow(
            source_id=f"candidate-{c.pk}", text_1=c.translation.strip(), text_2=c.text,
            metadata={"source_file": c.source_file, "line": c.line_number, "matched_tokens": c.matched_tokens},
        )
        for c in candidates
    ]
    return corpus_store(
        name=name, component=component_get(name="nbr_substitution"), import_format=Corpus.Format.BUILT, pairs=pairs,
        source="number-substitution candidates reviewed and translated in the admin, from: " + ", ".join(files),
        attribution="as the candidate source files", replace=replace,
        params={"builder": "nbr_substitution", "finder_version": FINDER_VERSION, "files": files,
                "candidate_ids": [c.pk for c in candidates]},
    )
