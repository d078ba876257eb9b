"""Rule-based content-error editors (Pauli et al. 2025, "Mind the Style Gap"): no database, no model, no downloads.

Each editor takes a good rewrite and a seeded `random.Random` and returns a `ContentEdit` (one span of the rewrite
replaced, dropped or added to) or None when the sentence offers nothing to edit. The same text and seed give the
same edit. The editors are POS-free: they look for numbers, number words, months, weekdays, capitalised names,
nouns after a determiner, prepositional phrases and clause boundaries with regular expressions and short lists.
"""
from __future__ import annotations

import random
import re
from collections.abc import Callable
from dataclasses import asdict, dataclass

SUBSTITUTION = "substitution"
DELETION = "deletion"
FABRICATION = "fabrication"
ERROR_TYPES = (SUBSTITUTION, DELETION, FABRICATION)


@dataclass(frozen=True)
class ContentEdit:
    """`text[start:end]` (== before) of the good rewrite becomes `after`; `rule` names the editor that chose it."""

    error_type: str
    rule: str
    start: int
    end: int
    before: str
    after: str

    def apply(self, text: str) -> str:
        return text[: self.start] + self.after + text[self.end:]

    def as_dict(self) -> dict[str, object]:
        return asdict(self)


NUMBER_WORDS = ["one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve",
                "twenty", "fifty", "hundred", "thousand"]
MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
          "November", "December"]
WEEKDAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]
RELATIVE_DAYS = ["today", "tomorrow", "yesterday", "tonight"]
NAMES = ["Anna", "David", "Maria", "James", "Sophie", "Peter", "Laura", "Thomas", "Emma", "Michael", "London",
         "Paris", "Berlin", "Chicago"]
NOUNS = ["meeting", "report", "party", "car", "book", "house", "dog", "phone", "letter", "doctor", "teacher",
         "movie", "restaurant", "computer", "garden", "train", "budget", "contract", "concert", "office", "song",
         "game", "school", "family", "ticket", "camera", "project", "dinner", "wedding", "bank"]
DETERMINERS = {"the", "a", "an", "my", "your", "his", "her", "our", "their", "this", "that", "these", "those",
               "its", "some", "every"}
FUNCTION_WORDS = DETERMINERS | {
    "i", "you", "he", "she", "it", "we", "they", "me", "him", "us", "them", "is", "are", "was", "were", "be", "been",
    "am", "do", "does", "did", "have", "has", "had", "will", "would", "can", "could", "should", "shall", "may",
    "might", "must", "not", "no", "and", "or", "but", "so", "if", "to", "of", "in", "on", "at", "by", "for", "with",
    "from", "about", "as", "than", "very", "too", "also", "just", "really", "quite", "please", "thank", "thanks",
    "yes", "what", "which", "who", "how", "why", "when", "where", "there", "here", "all", "any", "more", "most",
    "much", "many", "own", "such", "only", "other", "same", "sure", "good", "great", "new", "old", "best", "lot",
}
PREPOSITIONS = {"to", "in", "on", "at", "by", "for", "with", "from", "about", "after", "before", "during", "near",
                "into", "over", "under", "since", "until", "without", "through", "across", "around"}
AUXILIARIES = {"is", "are", "was", "were", "be", "been", "will", "would", "can", "could", "has", "have", "had",
               "should", "must", "may", "might", "do", "does", "did", "shall"}
BOUNDARY = PREPOSITIONS | AUXILIARIES | {"and", "or", "but", "because", "so", "which", "that", "who", "while",
                                         "although"}
MAX_PHRASE_WORDS = 7
FABRICATED_CLAUSES = [
    "because the manager asked for it", "which was announced last week", "after the storm damaged the roof",
    "although the budget was cut in half", "since the company moved to Berlin", "while the children were asleep",
    "because the train was cancelled", "after the election in March", "which cost more than two thousand dollars",
    "before the doctor arrived", "as the police had warned", "when the contract expired",
]
FABRICATED_OPENERS = ["According to the police, ", "Last Tuesday, ", "After the merger, ", "In 2019, ",
                      "At the hospital, "]

TIME_WORDS = {w.lower() for w in RELATIVE_DAYS + WEEKDAYS + MONTHS} | {"now", "soon", "again", "later", "early"}
TRAILING_CLAUSE = re.compile(r",\s+(?:as|because|and|but|which|so|since|while|although|though|who)\b[^,;.!?]*")
TIME_PHRASE = re.compile(r" (?:this|next|last|every) (?:weekend|morning|afternoon|evening|night|week|month|year|"
                         r"summer|winter|spring|autumn)\b", re.IGNORECASE)
WORD = re.compile(r"[A-Za-z][A-Za-z'-]*")
DIGITS = re.compile(r"\d+(?:[.,]\d+)?")


def _tokens(text: str) -> list[re.Match[str]]:
    return list(WORD.finditer(text))


def _pick_other(rng: random.Random, pool: list[str], current: str) -> str:
    choices = [w for w in pool if w.lower() != current.lower()]
    choice = rng.choice(choices)
    if current[:1].isupper() and not choice[:1].isupper():
        choice = choice[:1].upper() + choice[1:]
    return choice


def _sentence_start(text: str, pos: int) -> bool:
    before = text[:pos].rstrip()
    return not before or before[-1] in ".!?\"'("


def substitution_candidates(text: str, rng: random.Random) -> list[ContentEdit]:
    """Numbers, then dates, then names, then nouns: the first kind the sentence has (Pauli's order of salience)."""
    words = _tokens(text)
    # In order, and lazily: a later kind draws from `rng` only when the earlier kinds found nothing.
    for kind in (_number_edits, _date_edits, _name_edits):
        edits = kind(text, words, rng)
        if edits:
            return edits
    return _noun_edits(text, words, rng)


def _number_edits(text: str, words: list[re.Match[str]], rng: random.Random) -> list[ContentEdit]:
    numbers = []
    for match in DIGITS.finditer(text):
        value = float(match.group().replace(",", ""))
        new = value + rng.choice([-3, -2, -1, 1, 2, 5, 10]) if value >= 10 else rng.choice(
            [d for d in range(2, 13) if d != value])
        new_text = str(int(new)) if float(new).is_integer() else f"{new:g}"
        numbers.append(ContentEdit(SUBSTITUTION, "number", match.start(), match.end(), match.group(), new_text))
    for match in words:
        if match.group().lower() in NUMBER_WORDS and match.group().lower() != "one":  # "one" is mostly a pronoun
            numbers.append(ContentEdit(SUBSTITUTION, "number", match.start(), match.end(), match.group(),
                                       _pick_other(rng, NUMBER_WORDS, match.group())))
    return numbers


def _date_edits(text: str, words: list[re.Match[str]], rng: random.Random) -> list[ContentEdit]:
    dates = []
    for match in words:
        word = match.group()
        for pool in (MONTHS, WEEKDAYS, RELATIVE_DAYS):
            if word.lower() in (w.lower() for w in pool):
                dates.append(ContentEdit(SUBSTITUTION, "date", match.start(), match.end(), word,
                                         _pick_other(rng, pool, word)))
    return dates


def _name_edits(text: str, words: list[re.Match[str]], rng: random.Random) -> list[ContentEdit]:
    return [ContentEdit(SUBSTITUTION, "name", m.start(), m.end(), m.group(), _pick_other(rng, NAMES, m.group()))
            for m in words if m.group()[0].isupper() and m.group().lower() not in FUNCTION_WORDS
            and m.group() != "I" and not _sentence_start(text, m.start())]


def _noun_edits(text: str, words: list[re.Match[str]], rng: random.Random) -> list[ContentEdit]:
    nouns = []
    for index, determiner in enumerate(words):
        if determiner.group().lower() not in DETERMINERS:
            continue
        # The head of the noun phrase: the last content word of up to three that follow the determiner with only
        # spaces between them ("the car advertisement" → advertisement, "the entire season" → season).
        head = None
        for follower in words[index + 1:index + 4]:
            gap = text[(head or determiner).end():follower.start()]
            if gap.strip() or follower.group().lower() in FUNCTION_WORDS:
                break
            head = follower
        word = head.group() if head else ""
        if head and len(word) > 2 and not word.lower().endswith("ly"):
            nouns.append(ContentEdit(SUBSTITUTION, "noun", head.start(), head.end(), word,
                                     _pick_other(rng, NOUNS, word)))
    return nouns


def deletion_candidates(text: str, rng: random.Random) -> list[ContentEdit]:
    """Prepositional phrases and trailing clauses, as long as at least three words remain."""
    words = _tokens(text)
    candidates = [edit for index in range(len(words)) if (edit := _phrase_deletion(text, words, index))]
    for match in TRAILING_CLAUSE.finditer(text):
        if len(_tokens(text[:match.start()])) >= 3:
            candidates.append(ContentEdit(DELETION, "clause", match.start(), match.end(), match.group(), ""))
    for match in TIME_PHRASE.finditer(text):
        if len(words) > 4:
            candidates.append(ContentEdit(DELETION, "time", match.start(), match.end(), match.group(), ""))
    if not candidates:
        for match in words:
            if match.group().lower() in TIME_WORDS and len(words) > 3:
                start = match.start() - 1 if match.start() > 0 and text[match.start() - 1] == " " else match.start()
                candidates.append(ContentEdit(DELETION, "time", start, match.end(), text[start:match.end()], ""))
    return candidates


def _phrase_end(text: str, words: list[re.Match[str]], index: int) -> int:
    """The index of the last word of the phrase that words[index] opens (itself when nothing follows it)."""
    last = index
    for follower in words[index + 1:]:
        between = text[words[last].end():follower.start()]
        if follower.group().lower() in BOUNDARY or any(c in between for c in ",;:.!?") \
                or last - index + 1 >= MAX_PHRASE_WORDS:
            break
        last = words.index(follower)
    return last


def _phrase_deletion(text: str, words: list[re.Match[str]], index: int) -> ContentEdit | None:
    """The prepositional phrase or clause that words[index] opens, as a deletion, if it is one."""
    head = words[index].group().lower()
    if head not in PREPOSITIONS and not (head in {"because", "which", "although", "while"} and index > 1):
        return None
    following = words[index + 1].group() if index + 1 < len(words) else ""
    if head == "to" and not (following.lower() in DETERMINERS or following[:1].isupper()):
        return None  # "to watch …" is an infinitive, not a place or a recipient
    last = _phrase_end(text, words, index)
    if last == index or len(words) - (last - index + 1) < 3:
        return None
    phrase = words[index:last + 1]
    if all(w.group().lower() in FUNCTION_WORDS for w in phrase[1:]):
        return None  # "to be", "for it": not a content phrase
    start, end = phrase[0].start(), phrase[-1].end()
    # Take one of the spaces around the phrase with it, and a comma that introduced it.
    if start > 0 and text[start - 1] == " ":
        start -= 1
        if start > 0 and text[start - 1] == ",":
            start -= 1
    elif end < len(text) and text[end] == " ":
        end += 1
    return ContentEdit(DELETION, "phrase", start, end, text[start:end], "")


def fabrication_candidates(text: str, rng: random.Random) -> list[ContentEdit]:
    """A clause added before the final punctuation, or an opener at the start."""
    stripped = text.rstrip()
    if len(_tokens(stripped)) < 2:
        return []
    end = len(stripped)
    while end > 0 and stripped[end - 1] in ".!?\"'":
        end -= 1
    clause = rng.choice(FABRICATED_CLAUSES)
    candidates = [ContentEdit(FABRICATION, "clause", end, end, "", f" {clause}" if stripped[end - 1:end] != ","
                              else f" {clause}")]
    first = _tokens(stripped)[0]
    if first.start() == 0 and first.group() != "I" and first.group() not in NAMES:
        opener = rng.choice(FABRICATED_OPENERS)
        lowered = first.group()[:1].lower() + first.group()[1:]
        candidates.append(ContentEdit(FABRICATION, "opener", 0, first.end(), first.group(), opener + lowered))
    return candidates


EDITORS: dict[str, Callable[[str, random.Random], list[ContentEdit]]] = {
    SUBSTITUTION: substitution_candidates, DELETION: deletion_candidates, FABRICATION: fabrication_candidates,
}


def content_error_make(*, text: str, error_type: str, seed: int | str) -> ContentEdit | None:
    """One edit of `error_type` for `text`, the same for the same (text, type, seed); None when none applies."""
    if error_type not in EDITORS:
        raise ValueError(f"error type must be one of {', '.join(ERROR_TYPES)}, not {error_type!r}")
    rng = random.Random(f"{seed}:{error_type}:{text}")
    candidates = EDITORS[error_type](text, rng)
    candidates = [c for c in candidates if c.apply(text).strip() != text.strip()]
    return rng.choice(candidates) if candidates else None
