"""Contraction rules for the `contraction` characteristic: expand and contract English sentences.

The dictionary is STEL's appendix C.1 (Wegmann & Nguyen 2021, `src/utility/const_generators.py` in
github.com/nlpsoc/STEL, MIT licence): exactly the entries STEL kept, with the same expansions. STEL only contracted
(and drew among the readings at random); building pairs in both directions needs a *reading* for every ambiguous
contraction, so the context rules below pick one or give up. Pure functions, no Django: the builder service wraps
them. Bump RULES_VERSION whenever a rule changes, because it is stored in the corpus parameters.

Expanding (a sentence with contractions; "the next word" skips adverbs such as never/already/not):
- n't, 'm, 're, 've and the one-reading entries expand as listed; can't -> cannot; won't -> will not;
  'll -> will (STEL: "shall / will"). Before a subject pronoun the negation moves: "Can't you" -> "Can you not".
- 'd: had before better/to/got or a past participle ("I'd never seen"); would before rather/have/be/like/love/
  prefer or another bare verb ("you'd think"); undecidable before a determiner, pronoun, punctuation or a verb whose
  participle is its base form ("he'd a car", "I'd come") -> skipped as ambiguous. STEL's "I should" reading is never
  chosen. how'd (did/would) is always skipped.
- 's on he/she/it/that/there/here/what/who/how/when: has before been/got/gotten/had; is before anything but a
  participle; before a participle only a passive cue decides (next word by/as, or it/that/there/what/here + called,
  named, known, ...) -> is, else skipped ("she's finished"). On everybody/everyone/somebody/someone/something 's is
  a contraction only before a verb-phrase word (an -ing form, been, got, here, not, ...), else a possessive.
- 's on any other word is a possessive ("John's car", "the Earth's crust") and is left alone.
- ain't is skipped as ambiguous; other contractions that C.1 lacks (let's, might've, where's) make the sentence
  "unlisted": it is skipped, because its expanded side would still hold a contraction.

Contracting (a sentence with expandable phrases; the inverse of C.1):
- "X not" -> n't for every C.1 negation ("do not" -> don't, "will not" -> won't, "cannot"/"can not" -> can't);
  "need not"/"ought not" only after a subject pronoun ("no need not to" stays).
- subject + am/is/are/will/shall/would/did: contracted unless the clause ends right after it ("what it is.") or a
  "not" follows a non-copula ("they will not" -> "they won't", not "they'll not"); am/is/are + not keep the subject
  contraction ("it's not").
- subject + has/have/had and modal + have: only as an auxiliary, i.e. before been/got/gotten or a participle
  ("I've seen", never "I've a dog"); "had better" -> 'd better. "X should"/"what does" are not contracted.
- Case follows the original words ("It is" -> "It's", "DO NOT" -> "DON'T"); the apostrophe is curly when the
  sentence already uses curly and no straight ones, else straight.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

RULES_VERSION = "stel-c1/2026-11-21.1"

# STEL appendix C.1, keys as STEL spells them (lower case here; the tokenizer lower-cases before the lookup).
STEL_CONTRACTIONS: dict[str, tuple[str, ...]] = {
    "aren't": ("are not",), "can't": ("cannot", "can not"), "could've": ("could have",),
    "couldn't": ("could not",), "didn't": ("did not",), "doesn't": ("does not",), "don't": ("do not",),
    "everybody's": ("everybody is",), "everyone's": ("everyone is",), "hadn't": ("had not",),
    "hasn't": ("has not",), "haven't": ("have not",), "he'd": ("he had", "he would"), "he'll": ("he will",),
    "he's": ("he has", "he is"), "here's": ("here is",), "how'd": ("how did", "how would"), "how'll": ("how will",),
    "how's": ("how has", "how is"), "i'd": ("i had", "i would", "i should"), "i'll": ("i shall", "i will"),
    "i'm": ("i am",), "i've": ("i have",), "isn't": ("is not",), "it'd": ("it would", "it had"),
    "it'll": ("it shall", "it will"), "it's": ("it has", "it is"), "mightn't": ("might not",),
    "mustn't": ("must not",), "must've": ("must have",), "needn't": ("need not",), "oughtn't": ("ought not",),
    "shan't": ("shall not",), "she'd": ("she had", "she would"), "she'll": ("she shall", "she will"),
    "she's": ("she has", "she is"), "should've": ("should have",), "shouldn't": ("should not",),
    "somebody's": ("somebody has", "somebody is"), "somebody'd": ("somebody would", "somebody had"),
    "somebody'll": ("somebody will",), "someone's": ("someone has", "someone is"),
    "someone'd": ("someone would", "someone had"), "someone'll": ("someone will",),
    "something's": ("something has", "something is"), "something'd": ("something would", "something had"),
    "something'll": ("something will",), "that'll": ("that will",), "that's": ("that has", "that is"),
    "that'd": ("that would", "that had"), "there'd": ("there had", "there would"),
    "there'll": ("there shall", "there will"), "there's": ("there has", "there is"), "there've": ("there have",),
    "these're": ("these are",), "they'd": ("they had", "they would"), "they'll": ("they shall", "they will"),
    "they're": ("they are",), "they've": ("they have",), "wasn't": ("was not",),
    "we'd": ("we had", "we would", "we should"), "we'll": ("we shall", "we will"), "we're": ("we are",),
    "we've": ("we have",), "weren't": ("were not",), "what's": ("what has", "what is", "what does"),
    "when's": ("when has", "when is"), "who'd": ("who would", "who had"), "who'll": ("who will",),
    "who's": ("who has", "who is"), "won't": ("will not",), "would've": ("would have",),
    "wouldn't": ("would not",), "you'd": ("you had", "you would"), "you'll": ("you shall", "you will"),
    "you're": ("you are",), "you've": ("you have",),
}

APOSTROPHES = "'\u2019\u02bc"  # straight, right single quotation mark (curly), modifier letter apostrophe
WORD_RE = re.compile(rf"[A-Za-z]+(?:[{APOSTROPHES}][A-Za-z]+)*")
CONTRACTION_ENDING_RE = re.compile(r"(?:n't|'(?:s|m|re|ve|ll|d))$")

# Hosts whose 's is always a contraction (STEL entries); for the indefinite pronouns 's is usually possessive
# ("everyone's opinion"), so it only counts as a contraction before a word that starts a verb phrase.
DEFINITE_S_HOSTS = {"he", "she", "it", "that", "there", "here", "what", "who", "how", "when"}
INDEFINITE_S_HOSTS = {"everybody", "everyone", "somebody", "someone", "something"}
# 's on these hosts is a contraction STEL left out of C.1 ("let's", "where's"): such sentences are skipped, because
# their expanded side would still hold a contraction.
UNLISTED_S_HOSTS = {"let", "where", "why", "this", "which"}
ADVERBS = {"not", "never", "already", "just", "ever", "always", "also", "really", "probably", "only", "still",
           "certainly", "definitely", "surely", "even", "finally", "recently", "rarely", "often", "all"}
DETERMINERS_AND_PRONOUNS = {"a", "an", "the", "my", "his", "her", "their", "our", "your", "its", "no", "some",
                            "any", "this", "that", "these", "those", "enough", "much", "many", "me", "him", "us",
                            "them", "you", "it", "lots", "plenty"}
# Past participles that are not also the base form: after 'd they force "had", after 's "has".
IRREGULAR_PARTICIPLES = {
    "been", "done", "gone", "seen", "taken", "given", "written", "known", "eaten", "fallen", "driven", "ridden",
    "spoken", "broken", "chosen", "forgotten", "gotten", "got", "had", "made", "said", "told", "found", "thought",
    "bought", "brought", "left", "lost", "heard", "felt", "kept", "met", "sent", "spent", "built", "held", "stood",
    "understood", "won", "paid", "sold", "taught", "caught", "fought", "slept", "meant", "led", "fed", "sat",
    "begun", "drunk", "swum", "sung", "flown", "grown", "thrown", "shown", "worn", "torn", "woken", "hidden",
    "forgiven", "stolen", "become",
}
BASE_FORM_PARTICIPLES = {"come", "become", "run", "put", "cut", "let", "set", "hit", "read", "hurt", "cost", "quit",
                         "shut", "spread", "bet", "burst"}
NOT_PAST_ED = {"shed", "wed", "embed", "bed", "red", "shred", "hundred", "sacred", "naked", "wicked", "kindred"}
IMPERSONAL_S_HOSTS = {"it", "that", "there", "what", "here"}
PASSIVE_IDIOMS = {"called", "named", "located", "based", "known", "supposed", "used", "allowed", "considered",
                  "required", "expected", "made", "set", "worth"}
CLAUSE_END = {"", ".", ",", ";", ":", "!", "?", ")", "]", "\"", "\u201d", "\u2026", "-", "\u2014", "\u2013"}
VERB_PHRASE_STARTERS = {"been", "got", "gotten", "gone", "here", "there", "not", "a", "an", "the", "so", "very",
                        "too", "going", "coming", "never", "always", "already", "just", "still", "really", "done"}


@dataclass
class Conversion:
    """The outcome for one sentence: both sides, or the reason it was skipped."""

    expanded: str = ""
    contracted: str = ""
    direction: str = ""  # "expand" (had contractions), "contract" (had expandable phrases), "both"
    changes: list[str] = field(default_factory=list)
    skip: str = ""  # "" | "ambiguous" | "unlisted" | "no_contraction"
    reason: str = ""


def _apostrophe_of(text: str) -> str:
    """Contract with the sentence's own apostrophe: curly if it uses curly ones and no straight ones."""
    return "\u2019" if "\u2019" in text and "'" not in text else "'"


def _with_case(template: str, original: str) -> str:
    """Give `template` (lower case; "i" for the pronoun) the case pattern of the `original` words."""
    letters = [c for c in original if c.isalpha()]
    if len(letters) > 1 and all(c.isupper() for c in letters):
        return template.upper()
    result = re.sub(r"\bi\b", "I", template) if re.search(r"\bI\b", original) else template
    if original[:1].isupper():
        result = result[:1].upper() + result[1:]
    return result


def _normalize(token: str) -> str:
    return re.sub(f"[{APOSTROPHES}]", "'", token).lower()


def _following(text: str, pos: int, n: int = 3) -> list[str]:
    """The next `n` tokens after `pos`, lower case: words, or one punctuation character; "" at the end."""
    out: list[str] = []
    token_re = re.compile(rf"\s*([A-Za-z]+(?:[{APOSTROPHES}][A-Za-z]+)*|\S|$)")
    while len(out) < n:
        match = token_re.match(text, pos)
        if match is None or match.group(1) == "":
            out.append("")
            break
        out.append(_normalize(match.group(1)))
        pos = match.end()
    return out + [""] * (n - len(out))


def _content_word(following: list[str]) -> str:
    """The first following word that is not an adverb (so "I'd never seen" decides on "seen")."""
    for word in following:
        if word not in ADVERBS:
            return word
    return ""


def _is_participle(word: str) -> bool:
    if word in IRREGULAR_PARTICIPLES:
        return True
    return len(word) > 3 and word.endswith("ed") and not word.endswith("eed") and word not in NOT_PAST_ED


def _resolve_d(host: str, following: list[str]) -> tuple[str | None, str]:
    """'d = had or would (STEL also lists "should" for I'd/we'd; never chosen here)."""
    if host == "how":
        return None, "how'd (did/would)"
    word = _content_word(following)
    if word in {"better", "to", "got"} or _is_participle(word):
        return "had", ""
    if word in {"rather", "have", "be", "like", "love", "prefer"}:
        return "would", ""
    if word in BASE_FORM_PARTICIPLES or word in DETERMINERS_AND_PRONOUNS or word in CLAUSE_END or not word.isalpha():
        return None, "'d (had/would)"
    return "would", ""  # a bare verb follows: "I'd say", "you'd think"


def _resolve_s(host: str, following: list[str]) -> tuple[str | None, str]:
    """'s = is or has: has before been/got/had; before another participle only a passive cue decides; else is."""
    word = _content_word(following)
    if word in {"been", "got", "gotten", "had"}:
        return "has", ""
    if _is_participle(word) or word in BASE_FORM_PARTICIPLES - {"come", "run"}:
        after = following[following.index(word) + 1] if word in following[:-1] else ""
        if after in {"by", "as"} or (host in IMPERSONAL_S_HOSTS and word in PASSIVE_IDIOMS):
            return "is", ""  # "it's called", "that's written by", "he's named as": passive, so "is"
        return None, "'s + participle (is/has)"
    return "is", ""


def expand_token(key: str, following: list[str]) -> tuple[str | None, str]:
    """Expansion of the dictionary contraction `key` (normalized) before `following`, or (None, reason)."""
    readings = STEL_CONTRACTIONS[key]
    if len(readings) == 1:
        return readings[0], ""
    if key == "can't":
        return "cannot", ""  # STEL: "cannot / can not"; the one-word form is the standard spelling
    host, _, ending = key.partition("'")
    if ending == "ll":
        return f"{host} will", ""  # "shall / will": "will" is the neutral modern reading
    if ending == "d":
        verb, reason = _resolve_d(host, following)
    else:
        verb, reason = _resolve_s(host, following)
    return (f"{host} {verb}" if verb else None), reason


def expand(text: str) -> tuple[str, list[str], str, str]:
    """Expand every contraction of `text`. Returns (expanded, changes, skip, reason); skip is "" when complete."""
    parts: list[str] = []
    changes: list[str] = []
    last = 0
    for match in WORD_RE.finditer(text):
        if match.start() < last:
            continue  # the subject pronoun already moved by an inverted n't
        token = match.group(0)
        key = _normalize(token)
        following = _following(text, match.end())
        if key == "ain't":
            return text, changes, "ambiguous", "ain't (am/is/are/has/have not)"
        if key not in STEL_CONTRACTIONS:
            if CONTRACTION_ENDING_RE.search(key) and (not key.endswith("'s") or key[:-2] in UNLISTED_S_HOSTS):
                return text, changes, "unlisted", f"{key} (not in STEL's dictionary)"
            continue  # an ordinary word, or a possessive ("John's car", "the Earth's crust")
        host = key.partition("'")[0]
        if host in INDEFINITE_S_HOSTS and key.endswith("'s"):
            word = _content_word(following)
            if word not in VERB_PHRASE_STARTERS and not word.endswith("ing"):
                continue  # possessive: "everyone's opinion"
        expansion, reason = expand_token(key, following)
        if expansion is None:
            return text, changes, "ambiguous", reason
        replacement = _with_case(expansion, token)
        end = match.end()
        inverted = re.match(r"\s+([A-Za-z]+)\b", text[end:])
        if key.endswith("n't") and inverted and inverted.group(1).lower() in INVERTED_SUBJECTS:
            # "Can't you see?" -> "Can you not see?": "Cannot you" would be ungrammatical
            auxiliary = "can" if key == "can't" else expansion.removesuffix(" not")
            replacement = f"{_with_case(auxiliary, token)} {inverted.group(1)} not"
            end += inverted.end()
        parts.append(text[last:match.start()])
        parts.append(replacement)
        changes.append(f"{text[match.start():end]} -> {replacement}")
        last = end
    parts.append(text[last:])
    return "".join(parts), changes, "", ""


def _contraction_table() -> dict[str, str]:
    """Expanded phrase -> contraction, inverted from C.1 ("I should" -> "I'd" left out: read as "I would")."""
    table: dict[str, str] = {}
    for contraction, readings in STEL_CONTRACTIONS.items():
        for reading in readings:
            if reading.endswith(" should") or reading.endswith(" does"):
                continue
            table.setdefault(reading, contraction)
    return table


CONTRACT_TABLE = _contraction_table()
NEGATABLE = {r.split()[0] for r in CONTRACT_TABLE if r.endswith(" not")}
# "need not"/"ought not" are contracted only after a subject pronoun: "no need not to" must stay as it is.
INVERTED_SUBJECTS = {"i", "you", "he", "she", "it", "we", "they"}
PRONOUN_SUBJECTS = {"i", "you", "he", "she", "it", "we", "they", "one", "who", "that"}


def _contractible(phrase: str, previous: str, following: list[str]) -> bool:
    """Whether the expanded `phrase` may be contracted in this context (rules in the module docstring)."""
    first, second = phrase.split(" ", 1) if " " in phrase else (phrase, "")
    if second == "not":
        return first not in {"need", "ought"} or previous in PRONOUN_SUBJECTS
    if following[0] in CLAUSE_END:
        return False  # "I know what it is." cannot become "what it's."
    if second in {"am", "is", "are"}:
        return True
    if following[0] == "not":
        return False  # "he has not", "they will not": the negation contracts instead (hasn't, won't)
    if second in {"has", "have", "had"}:
        word = _content_word(following)
        if second == "had" and word == "better":
            return True
        return word in {"been", "got", "gotten"} or _is_participle(word)  # auxiliary only, never "I have a dog"
    return True  # will, shall, would, did


def contract(text: str) -> tuple[str, list[str]]:
    """Contract every expandable phrase of `text` that the context allows. Returns (contracted, changes)."""
    apostrophe = _apostrophe_of(text)
    words = list(WORD_RE.finditer(text))
    parts: list[str] = []
    changes: list[str] = []
    last = 0
    index = 0
    while index < len(words):
        match = words[index]
        previous = _normalize(words[index - 1].group(0)) if index else ""
        candidates: list[tuple[str, int]] = []
        if match.group(0).lower() == "cannot":
            candidates.append(("cannot", index))
        if index + 1 < len(words) and text[match.end():words[index + 1].start()].isspace():
            candidates.append((f"{_normalize(match.group(0))} {_normalize(words[index + 1].group(0))}", index + 1))
        done = False
        for phrase, end_index in candidates:
            if phrase == "can not":
                phrase = "cannot"
            if phrase not in CONTRACT_TABLE:
                continue
            end = words[end_index].end()
            if not _contractible(phrase, previous, _following(text, end)):
                continue
            original = text[match.start():end]
            replacement = _with_case(CONTRACT_TABLE[phrase], original).replace("'", apostrophe)
            parts.append(text[last:match.start()])
            parts.append(replacement)
            changes.append(f"{original} -> {replacement}")
            last = end
            index = end_index + 1
            done = True
            break
        if not done:
            index += 1
    parts.append(text[last:])
    return "".join(parts), changes


def convert(sentence: str) -> Conversion:
    """Both sides of the pair for one sentence: every contraction expanded, every expandable phrase contracted."""
    expanded, expand_changes, skip, reason = expand(sentence)
    if skip:
        return Conversion(skip=skip, reason=reason)
    contracted, contract_changes = contract(sentence)
    if not expand_changes and not contract_changes:
        return Conversion(skip="no_contraction")
    direction = "both" if expand_changes and contract_changes else ("expand" if expand_changes else "contract")
    # Expanded side: the sentence with its contractions written out (its expandable phrases are already expanded);
    # contracted side: the sentence with its expandable phrases contracted (its contractions kept as written).
    return Conversion(
        expanded=expanded, contracted=contracted, direction=direction, changes=expand_changes + contract_changes
    )
