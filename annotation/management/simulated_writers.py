"""Simulated writers for `simulate_annotators --writers` (rewrite studies): what each kind of writer writes and the
writing telemetry its page would send (annotation/static/annotation/telemetry.js), in the time it takes.

- careful: reads the source, types at a person's speed (log-normal, median 4 characters a second, about 48 words a
  minute), pauses at words and now and then to think, makes typos it deletes, sometimes looks something up in
  another tab, sometimes pastes a piece of the original or one word from elsewhere;
- paster: goes to another tab (a chatbot) for 15-75 s, comes back and pastes the whole answer, edits a little;
- machine: a program types the answer at 20-150 characters a second, sometimes after fetching it elsewhere;
- copier: takes another writer's rewrite of the same source (shared on a forum), changes a word, and types it at a
  person's speed or pastes it;
- forger: a program that sends the answer with forged telemetry (FORGERIES): the attack run's block (a million keys
  and characters, 1 ms on the item), a careful typist's block claimed for an answer sent within seconds, typing
  claimed for a pasted text with room to spare, or a block a careful typist's page would send, with the time to
  match (which only the text signals can catch).

Times are real: the simulator waits a plan's `seconds` between receiving the item and sending the answer, so the
server's clock agrees with the page's. The texts are drawn from many choice points, so two careful writers of one
source rarely write the same sentence (people sometimes do: docs/benchmarks.md says how the near-duplicate threshold
was checked)."""
from __future__ import annotations

import math
import random
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from core.errors import ApplicationError

WRITER_KINDS = ("careful", "paster", "machine", "copier", "forger")
MACHINE_LIKE = ("paster", "machine", "copier", "forger")
FORGERIES = ("inflated", "hurried", "padded", "mimic")

EXPANSIONS = {"i": "I", "i'm": "I am", "im": "I am", "don't": "do not", "dont": "do not", "can't": "cannot",
              "won't": "will not", "it's": "it is", "isn't": "is not", "u": "you", "ur": "your", "r": "are",
              "gonna": "going to", "wanna": "want to", "gotta": "have to", "thats": "that is", "that's": "that is",
              "i'd": "I would", "ya": "you", "pls": "please", "plz": "please", "cuz": "because", "coz": "because",
              "tho": "though", "kinda": "somewhat", "dunno": "do not know", "idk": "I do not know", "y": "why",
              "b4": "before", "2": "to", "4": "for", "thx": "thank you", "yeah": "yes", "ok": "all right",
              "lol": "", "haha": "", "omg": "", "btw": "by the way", "n": "and", "ppl": "people", "sry": "sorry"}
SYNONYMS = {"good": ["good", "fine", "excellent", "pleasant"], "bad": ["bad", "poor", "unpleasant", "terrible"],
            "really": ["really", "truly", "very", ""], "very": ["very", "extremely", "quite"],
            "like": ["like", "enjoy", "appreciate"], "get": ["get", "obtain", "receive"], "got": ["got", "received",
            "obtained"], "want": ["want", "would like", "wish"], "think": ["think", "believe", "consider"],
            "great": ["great", "wonderful", "excellent"], "big": ["big", "large", "considerable"],
            "help": ["help", "assist", "support"], "buy": ["buy", "purchase"], "start": ["start", "begin"],
            "maybe": ["maybe", "perhaps", "possibly"], "stuff": ["things", "items", "belongings"],
            "guy": ["man", "gentleman", "person"], "guys": ["people", "everyone", "all of you"],
            "kids": ["children", "young people"], "show": ["show", "programme", "series"],
            "awesome": ["wonderful", "excellent", "impressive"], "sure": ["certain", "sure"],
            "cool": ["pleasant", "agreeable", "good"], "mad": ["angry", "upset"], "tell": ["tell", "inform"],
            "need": ["need", "require"], "also": ["also", "additionally", "furthermore"], "so": ["so", "therefore"],
            "just": ["just", "simply", "merely", ""], "lot": ["lot", "great deal"], "fine": ["fine", "well"]}
OPENERS = ["", "", "", "", "", "", "In my opinion, ", "I believe that ", "Frankly, ", "To be honest, ", "Personally, ",
           "I would say that ", "It seems to me that ", "Honestly, ", "As far as I can tell, ", "In truth, ",
           "I must admit that ", "If I may say so, ", "As I see it, ", "Quite simply, ", "I feel that ", "Indeed, "]
CLOSERS = [".", ".", ".", "!", ", in my view.", ", I believe.", " indeed.", ", I am afraid.", ", to be fair.",
           ", as far as I know.", ", it seems.", ", truly."]
ASIDES = ["certainly", "in fact", "however", "of course", "naturally", "admittedly", "clearly", "evidently"]
FILLERS = {"just", "really", "so", "very", "like", "totally", "actually", "basically", "pretty"}


def writers_parse(text: str) -> dict[str, float]:
    """`careful=0.6,paster=0.15,machine=0.15,copier=0.1`: shares of writer kinds (normalized to sum 1)."""
    shares: dict[str, float] = {}
    for part in (p for p in text.split(",") if p.strip()):
        name, sep, value = part.partition("=")
        try:
            share = float(value)
        except ValueError:
            share = -1.0
        if not sep or name.strip() not in WRITER_KINDS or share < 0:
            raise ApplicationError(f"--writers: expected KIND=SHARE with KIND one of {WRITER_KINDS}, not {part!r}.")
        shares[name.strip()] = share
    if not shares or sum(shares.values()) <= 0:
        raise ApplicationError("--writers: give at least one kind with a positive share.")
    total = sum(shares.values())
    return {name: share / total for name, share in shares.items()}


def writer_kind_draw(rng: random.Random, shares: dict[str, float]) -> str:
    return rng.choices(list(shares), weights=list(shares.values()))[0]


def rewrite_text(rng: random.Random, source: str) -> str:
    """A formal rewrite of `source` in one writer's own words: slang expanded, fillers dropped or kept, words
    exchanged for synonyms, an aside, an opener or a closer now and then, capitalised and punctuated: each writer
    makes these choices independently, so two writers' rewrites of one source differ as people's do."""
    drop_fillers = rng.random() < 0.5
    words = []
    for raw in source.split():
        core = raw.strip(".,!?").lower()
        if drop_fillers and core in FILLERS:
            continue
        word = EXPANSIONS.get(core, raw.strip(".,!?") if core not in SYNONYMS else rng.choice(SYNONYMS[core]))
        if word:
            words.append(word)
    if len(words) > 3 and rng.random() < 0.5:
        words.insert(rng.randrange(1, len(words) - 1), rng.choice(ASIDES))
    body = " ".join(words) or source
    opener = rng.choice(OPENERS)
    text = opener + (body if opener else body[:1].upper() + body[1:])
    return text.rstrip(".!?, ") + rng.choice(CLOSERS)


def copy_edit(rng: random.Random, text: str) -> str:
    """A copier's change: one word dropped or exchanged, or the end punctuation, so the copy is not byte-equal."""
    words = text.split()
    choice = rng.random()
    if choice < 0.4 and len(words) > 4:
        del words[rng.randrange(1, len(words) - 1)]
    elif choice < 0.8:
        n = rng.randrange(len(words))
        core = words[n].strip(".,!?").lower()
        if core in SYNONYMS:
            words[n] = words[n].lower().replace(core, rng.choice(SYNONYMS[core]) or core)
    out = " ".join(words)
    return out[:-1] + "!" if out.endswith(".") and choice >= 0.8 else out


@dataclass
class Plan:
    """What a writer sends for one item, and how long after receiving it."""

    text: str
    seconds: float
    telemetry: dict[str, Any]
    copied: bool = False
    events: dict[str, Any] = field(default_factory=dict)


class _Page:
    """Builds a telemetry block as telemetry.js would record it, event by event, on a millisecond clock."""

    IDLE_MS = 2000

    def __init__(self) -> None:
        self.t = 0.0
        self.data: dict[str, Any] = {"version": 1, "keystrokes": 0, "deletions": 0, "typed_chars": 0,
                                     "deleted_chars": 0, "pasted_chars": 0, "paste_count": 0, "first_key_ms": None,
                                     "active_ms": 0, "focus_loss_count": 0, "focus_loss_ms": 0, "pastes": [],
                                     "focus_losses": []}
        self.last_edit: float | None = None
        self.awaiting: dict[str, Any] | None = None

    def wait(self, ms: float) -> None:
        self.t += max(ms, 0)

    def _edit(self) -> None:
        if self.data["first_key_ms"] is None:
            self.data["first_key_ms"] = round(self.t)
        if self.last_edit is not None and self.t - self.last_edit <= self.IDLE_MS:
            self.data["active_ms"] += round(self.t - self.last_edit)
        self.last_edit = self.t

    def _inserted(self, chars: int) -> None:
        if self.awaiting is not None and chars > 0:
            self.awaiting["next_insert_chars"] = chars
            self.awaiting["next_insert_after_ms"] = round(self.t - self.awaiting.pop("_back"))
            self.awaiting = None

    def key(self, chars: int = 1) -> None:
        self.data["keystrokes"] += 1
        self.data["typed_chars"] += chars
        self._edit()
        self._inserted(chars)

    def backspace(self) -> None:
        self.data["keystrokes"] += 1
        self.data["deletions"] += 1
        self.data["deleted_chars"] += 1
        self._edit()

    def paste(self, chars: int, *, of_source: bool) -> None:
        self.data["paste_count"] += 1
        self.data["pasted_chars"] += chars
        if len(self.data["pastes"]) < 50:
            self.data["pastes"].append({"at_ms": round(self.t), "chars": chars, "matched_source": of_source})
        self._inserted(chars)
        self.last_edit = None

    def away(self, ms: float) -> None:
        entry = {"at_ms": round(self.t), "ms": round(ms), "next_insert_chars": 0, "next_insert_after_ms": None}
        self.t += ms
        self.data["focus_loss_count"] += 1
        self.data["focus_loss_ms"] += round(ms)
        if len(self.data["focus_losses"]) < 50:
            self.data["focus_losses"].append(entry)
        if self.awaiting is not None:
            self.awaiting.pop("_back", None)
        self.awaiting = entry
        entry["_back"] = self.t
        self.last_edit = None

    def done(self, review_ms: float) -> tuple[dict[str, Any], float]:
        self.wait(review_ms)
        if self.awaiting is not None:
            self.awaiting.pop("_back", None)
        return {**self.data, "submit_ms": round(self.t)}, self.t / 1000


def _type(page: _Page, rng: random.Random, text: str, *, cps: float, typos: float, pauses: bool) -> None:
    """Key by key at `cps` on average: gamma-distributed intervals, longer at word starts, thinking pauses."""
    for n, char in enumerate(text):
        interval = rng.gammavariate(2.0, 500 / cps)
        if pauses and char == " " and rng.random() < 0.15:
            interval += rng.uniform(300, 1500)
        if pauses and char == " " and rng.random() < 0.02:
            interval += rng.uniform(2000, 7000)
        page.wait(interval)
        if typos and rng.random() < typos and n:
            page.key()
            page.wait(rng.gammavariate(2.0, 600 / cps))
            page.backspace()
            page.wait(rng.gammavariate(2.0, 500 / cps))
        page.key()


def plan_careful(rng: random.Random, source: str, text: str | None = None) -> Plan:
    text = text or rewrite_text(rng, source)
    page = _Page()
    cps = min(max(rng.lognormvariate(math.log(4.0), 0.35), 1.5), 9.0)
    page.wait(rng.lognormvariate(math.log(6000), 0.4))  # reading the source
    typed = text
    look_up = rng.random() < 0.15
    paste_source = rng.random() < 0.05
    paste_word = rng.random() < 0.03
    if paste_source:  # the original pasted, then rewritten by hand: only its pieces stay, typed over
        page.paste(len(source), of_source=True)
        page.wait(rng.uniform(800, 2000))
        for _ in range(len(source)):
            page.backspace()
            page.wait(rng.uniform(30, 80))
    cut = rng.randrange(len(typed) // 3, 2 * len(typed) // 3) if look_up or paste_word else len(typed)
    _type(page, rng, typed[:cut], cps=cps, typos=0.04, pauses=True)
    if look_up:
        page.away(rng.uniform(3000, 45000))  # a dictionary in another tab
        page.wait(rng.uniform(300, 1500))
    if paste_word:
        word = rng.choice(["nonetheless", "regarding", "appreciate", "unfortunately"])
        page.paste(len(word), of_source=False)
        page.wait(rng.uniform(500, 1500))
        for _ in range(len(word)):  # it did not fit after all
            page.backspace()
            page.wait(rng.uniform(40, 90))
    _type(page, rng, typed[cut:], cps=cps, typos=0.04, pauses=True)
    telemetry, seconds = page.done(rng.uniform(1000, 5000))
    return Plan(text, seconds, telemetry, events={"cps": round(cps, 2), "look_up": look_up})


def plan_paster(rng: random.Random, source: str, text: str | None = None, *, copied: bool = False) -> Plan:
    text = text or rewrite_text(rng, source)
    page = _Page()
    page.wait(rng.uniform(2000, 8000))
    page.away(rng.uniform(15000, 75000) if rng.random() < 0.7 else rng.uniform(3000, 15000))
    page.wait(rng.uniform(300, 2500))
    page.paste(len(text), of_source=False)
    if rng.random() < 0.4:  # a small touch-up
        page.wait(rng.uniform(500, 2000))
        page.backspace()
        page.wait(rng.uniform(100, 300))
        page.key()
    telemetry, seconds = page.done(rng.uniform(1000, 6000))
    return Plan(text, seconds, telemetry, copied=copied)


def plan_machine(rng: random.Random, source: str) -> Plan:
    text = rewrite_text(rng, source)
    page = _Page()
    page.wait(rng.uniform(500, 3000))
    if rng.random() < 0.5:
        page.away(rng.uniform(10000, 60000))  # the text fetched elsewhere first
        page.wait(rng.uniform(200, 1000))
    cps = math.exp(rng.uniform(math.log(20), math.log(150)))
    _type(page, rng, text, cps=cps, typos=0.0, pauses=False)
    telemetry, seconds = page.done(rng.uniform(200, 2000))
    return Plan(text, seconds, telemetry, events={"cps": round(cps, 1)})


def plan_copier(rng: random.Random, source: str, others: list[str]) -> Plan:
    """Another writer's rewrite of this source with one change, typed at a person's speed or pasted; with no
    rewrite to copy yet, the copier writes its own (not a copy)."""
    if not others:
        return plan_careful(rng, source)
    text = copy_edit(rng, rng.choice(others))
    if rng.random() < 0.5:
        plan = plan_careful(rng, source, text)
    else:
        plan = plan_paster(rng, source, text)
    plan.copied = True
    return plan


def plan_forger(rng: random.Random, source: str) -> Plan:
    """A program's answer with forged telemetry, of one of FORGERIES' kinds (its `events["forgery"]`)."""
    text = rewrite_text(rng, source)
    forgery = rng.choice(FORGERIES)
    if forgery == "mimic":  # a careful typist's block, sent after the time it claims
        plan = plan_careful(rng, source, text)
        plan.events = {"forgery": forgery}
        return plan
    page = _Page()
    block = {**page.data, "typed_chars": len(text), "keystrokes": len(text) + rng.randrange(0, 10),
             "first_key_ms": round(rng.uniform(2000, 6000)), "active_ms": round(rng.uniform(10000, 25000)),
             "submit_ms": round(rng.uniform(25000, 40000))}
    seconds = rng.uniform(25, 40)
    if forgery == "inflated":  # the attack run's block
        block.update(keystrokes=1_000_000, typed_chars=1_000_000, submit_ms=1, active_ms=0, first_key_ms=0)
        seconds = rng.uniform(0.5, 2)
    elif forgery == "hurried":  # the careful block, but the answer goes out within seconds
        block["submit_ms"] = round(rng.uniform(500, 2000))
        block.update(first_key_ms=100, active_ms=block["submit_ms"] - 200)
        seconds = block["submit_ms"] / 1000
    else:  # padded: the whole text pasted, and more typing claimed than the text holds
        block.update(pasted_chars=len(text), paste_count=1, typed_chars=3 * len(text), keystrokes=3 * len(text),
                     pastes=[{"at_ms": 20000, "chars": len(text), "matched_source": False}])
    return Plan(text, seconds, block, events={"forgery": forgery})


# Each kind's plan but the copier's (which needs the other writers' rewrites).
PLANS: dict[str, Callable[[random.Random, str], Plan]] = {
    "careful": plan_careful, "paster": plan_paster, "machine": plan_machine, "forger": plan_forger}
