"""python manage.py simulate_annotators --study SLUG --participants N --accuracy P --screen-fail F
--concurrency C --base-url URL

Plays participants over the HTTP annotator API (aiohttp), exactly as browsers would: for the demo (filling a
study) and for load tests (per-endpoint latencies). The simulator knows the right answers only through the
server-side answer key (one query per batch), never through the API.
"""
from __future__ import annotations

import asyncio
import json
import random
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np
from asgiref.sync import sync_to_async
from django.db import connections

from annotation.management.simulated_writers import (
    PLANS,
    Plan,
    plan_careful,
    plan_copier,
    writer_kind_draw,
    writers_parse,
)
from annotation.models import EntryPlatform, ItemKind, Reservation, Response, Study
from annotation.selectors import batch_answer_key
from annotation.services.rewrites import copy_ratio
from core.commands import JsonCommand
from core.errors import ApplicationError

RETRIES = 3
FRAMES = ("{}.", "In more formal terms: {}.", "Put formally, {}.", "{}, to state it formally.")
EXPANSIONS = {"i": "I", "i'm": "I am", "don't": "do not", "can't": "cannot", "won't": "will not", "it's": "it is",
              "isn't": "is not", "u": "you", "ur": "your", "gonna": "going to", "wanna": "want to", "lol": "",
              "im": "I am", "dont": "do not", "thats": "that is", "that's": "that is", "i'd": "I would"}
ENDPOINTS = ("sessions", "consent", "eligibility", "start", "next", "answers")


class Crowd:
    def __init__(self, *, study: Study, base_url: str, accuracy: float, use_published: bool,
                 item_accuracy: dict[str, float], screen_fail: float, batches_each: int, seed: int,
                 think_time: float, copy_rate: float = 0.0, sloppy_rate: float = 0.0,
                 writers: dict[str, float] | None = None, copier_delay: float = 0.0, ask_next: bool = False) -> None:
        self.study = study
        self.base_url = base_url.rstrip("/")
        self.accuracy = accuracy
        self.use_published = use_published
        self.item_accuracy = item_accuracy
        self.screen_fail = screen_fail
        self.batches_each = batches_each
        self.rng = random.Random(seed)
        self.think_time = think_time
        self.copy_rate = copy_rate  # rewrite studies: share of rewrites first tried as a copy of the source
        self.sloppy_rate = sloppy_rate  # rewrite studies: share of writers whose rewrites drop the content
        self.ask_next = ask_next  # a client that ignores the answer's `next`: two requests per item
        self.writers = writers  # rewrite studies: shares of writer kinds sending writing telemetry (simulated_writers)
        self.copier_delay = copier_delay  # copiers start later, once there are rewrites to copy
        self.truth: dict[str, dict[str, Any]] = {}  # participant id → writer kind and what each rewrite was
        self.latencies: dict[str, list[float]] = defaultdict(list)
        self.retry_after = 5.0
        self.statuses: dict[str, dict[int, int]] = defaultdict(lambda: defaultdict(int))
        self.counts = defaultdict(int)
        self.eligible_answers = {q["name"]: (q.get("accept") or q.get("choices"))[0]
                                 for q in study.eligibility_questions}

    async def call(self, session: Any, method: str, endpoint: str, path: str, body: Any = None) -> tuple[int, Any]:
        # optional: aiohttp is needed only by the HTTP simulation
        import aiohttp

        started = time.perf_counter()
        for attempt in range(1, RETRIES + 1):
            try:
                async with session.request(method, self.base_url + path, json=body) as response:
                    text = await response.text()
                    status = response.status
                    # read right after this call returns (no await in between), so coroutines do not mix it up
                    self.retry_after = float(response.headers.get("Retry-After", "5") or 5)
                break
            except (aiohttp.ClientConnectorError, ConnectionRefusedError):
                raise  # nothing listens at --base-url: a configuration error, not a load result
            except (aiohttp.ClientError, TimeoutError) as exc:
                # A dropped keep-alive connection or a timeout: resend, as the browser UI lets people do. Every
                # participant endpoint is safe to repeat (the same answer again is acknowledged, not stored twice).
                self.counts["retries"] += 1
                if attempt == RETRIES:
                    self.latencies[endpoint].append(time.perf_counter() - started)
                    self.statuses[endpoint][599] += 1
                    return 599, {"error": {"code": "connection", "message": str(exc)[:200]}}
                await asyncio.sleep(0.2 * attempt)
        try:
            data = json.loads(text)
        except ValueError:  # e.g. an HTML 404 for a malformed URL: keep going, count it as an error
            data = {"error": {"code": "not_json", "message": text[:200]}}
        self.latencies[endpoint].append(time.perf_counter() - started)
        self.statuses[endpoint][status] += 1
        return status, data

    def _rewrite(self, item: dict[str, Any], sloppy: bool) -> str:
        """A simulated writer's rewrite of the shown source: a good one keeps every word (contractions expanded) in a
        formal frame, different enough not to count as a copy; a sloppy one keeps the first word and drops the rest."""

        source = item["texts"]["source"]
        if sloppy:
            return source.split()[0] + " something or other, whatever."
        words = " ".join(EXPANSIONS.get(w.lower(), w) for w in source.split()).rstrip(".!")
        text = self.rng.choice(FRAMES).format(words[:1].upper() + words[1:])
        threshold = item.get("copy_threshold") or 100
        while copy_ratio(source=source, rewrite=text) >= threshold - 5:
            text = "To state it plainly and formally: " + text
        return text[:item.get("max_length") or len(text)]

    def _answer(self, item: dict[str, Any], key: dict[str, Any], fails_screening: bool) -> Any:
        kind = item["kind"]
        if kind == ItemKind.LIKERT:
            return {q["name"]: self.rng.randint(q["min"], q["max"]) for q in item["questions"]}
        if kind == ItemKind.RANKING:
            ids = [o["id"] for o in item["outputs"]]
            self.rng.shuffle(ids)
            return ids
        if kind == ItemKind.REWRITE:
            return self._rewrite(item, sloppy=fails_screening)
        expected = key.get("expected")
        if expected is None:
            return self.rng.choice(item["choices"])
        wrong = next(c for c in item["choices"] if c != expected)
        if key["screening"]:
            return wrong if fails_screening else expected
        p = self.accuracy
        if key.get("external_id") in self.item_accuracy:
            p = self.item_accuracy[key["external_id"]]
        elif self.use_published and key.get("published_votes") is not None:
            p = key["published_votes"] / 5
        return expected if self.rng.random() < p else wrong

    def link(self) -> dict[str, str]:
        """A well-formed platform link for this study (docs/annotator-api.md, "Who may take part")."""
        if self.study.platform == EntryPlatform.MTURK:
            return {"platform": "mturk", "participant": f"A{self.rng.getrandbits(52):013X}",
                    "study_ref": f"{self.rng.getrandbits(120):030X}",
                    "session_ref": f"{self.rng.getrandbits(120):030X}"}
        return {"platform": "prolific", "participant": f"{self.rng.getrandbits(96):024x}",
                "study_ref": self.study.prolific_study_id or f"{self.rng.getrandbits(96):024x}",
                "session_ref": f"{self.rng.getrandbits(96):024x}"}

    async def open_session(self, session: Any, link: dict[str, str]) -> tuple[int, Any]:
        """POST sessions/, waiting out a 429 (Retry-After) as a patient participant would, a few times."""
        for _ in range(RETRIES):
            status, body = await self.call(session, "POST", "sessions",
                                           f"/api/v1/studies/{self.study.slug}/sessions/", link)
            if status != 429:
                break
            self.counts["throttled"] += 1
            await asyncio.sleep(min(self.retry_after, 60.0))
        return status, body

    async def written(self, item: dict[str, Any], pid: str) -> Plan:
        """The plan of a writer of kind `self.truth[pid]["kind"]` for this item (telemetry, text, time to take)."""
        kind = self.truth[pid]["kind"]
        source = item["texts"]["source"]
        if kind == "copier":
            plan = plan_copier(self.rng, source, await sync_to_async(_other_rewrites)(item["id"]))
        else:
            plan = PLANS[kind](self.rng, source)
        threshold = item.get("copy_threshold") or 101
        if copy_ratio(source=source, rewrite=plan.text) >= threshold:  # would be refused: say it plainly instead
            plan = plan_careful(self.rng, source, self._rewrite(item, sloppy=False))
        self.truth[pid]["rewrites"].append({"item": item["id"], "copied": plan.copied,
                                            "seconds": round(plan.seconds, 1), **plan.events})
        return plan

    async def participant(self, session: Any, index: int) -> None:
        link = self.link()
        fails_screening, answers = await self._persona(link)
        for _ in range(self.batches_each):
            # The token of the previous batch proves it is the same participant (a browser sends its cookie).
            link = await self._batch_start(session, link, answers)
            if link is None or not await self._batch_answer(session, link, fails_screening):
                return

    async def _persona(self, link: dict[str, str]) -> tuple[bool, dict[str, Any]]:
        """Who this participant is: a writer's kind (rewrite studies), whether they fail screening (or write
        sloppily), and their eligibility answers."""
        writes = self.study.item_kind == ItemKind.REWRITE
        if writes and self.writers:
            kind = writer_kind_draw(self.rng, self.writers)
            self.truth[link["participant"]] = {"kind": kind, "rewrites": []}
            self.counts[f"writers_{kind}"] += 1
            if kind == "copier" and self.copier_delay:
                await asyncio.sleep(self.copier_delay)
        fails_screening = self.rng.random() < (self.sloppy_rate if writes else self.screen_fail)
        self.counts["sloppy_writers" if writes else "screen_failers"] += fails_screening
        answers = {**self.eligible_answers, **{  # persona questions (rewrite studies): any answer, drawn at random
            q["name"]: self.rng.choice(q["choices"]) for q in self.study.eligibility_questions if q.get("persona")}}
        return fails_screening, answers

    async def _batch_start(self, session: Any, link: dict[str, str], answers: dict[str, Any]
                           ) -> dict[str, str] | None:
        """A batch opened and taken through consent, eligibility and instructions: the link with its token, or None
        when it was refused (counted)."""
        status, body = await self.open_session(session, link)
        if status not in (200, 201) or not body.get("token"):
            self.counts["errors" if status == 599 else "refused"] += 1
            return None
        token = body["token"]
        link = {**link, "token": token}
        # A simulated person ticks the separate special-category consent too (ignored where none is asked).
        status, body = await self.call(session, "POST", "consent", f"/api/v1/sessions/{token}/consent/",
                                       {"agree": True, "special_category": True})
        if body.get("state") == "eligibility":
            status, body = await self.call(session, "POST", "eligibility",
                                           f"/api/v1/sessions/{token}/eligibility/",
                                           {"answers": answers})
        if body.get("state") == "instructions":
            status, body = await self.call(session, "POST", "start", f"/api/v1/sessions/{token}/start/", {})
            if status != 200:
                self.counts["refused"] += 1
                return None
        return link

    async def _batch_answer(self, session: Any, link: dict[str, str], fails_screening: bool) -> bool:
        """Every item of the batch answered; False when the participant stops on an error (counted)."""
        token = link["token"]
        answer_key = await sync_to_async(batch_answer_key)(token=token)
        status, body = await self.call(session, "GET", "next", f"/api/v1/sessions/{token}/next/")
        while True:
            if status != 200:
                self.counts["errors"] += 1
                return False
            item = body["item"]
            if item is None:
                self.counts["batches_completed"] += 1
                return True
            answer, plan = await self._item_answer(item, link, answer_key, fails_screening)
            if item["kind"] == ItemKind.REWRITE and self.rng.random() < self.copy_rate:
                status, body = await self.call(session, "POST", "answers", f"/api/v1/sessions/{token}/answers/",
                                               {"item": item["id"], "answer": item["texts"]["source"]})
                self.counts["copies_refused" if status == 400 else "copies_stored"] += 1
            status, body = await self.call(session, "POST", "answers", f"/api/v1/sessions/{token}/answers/",
                                           {"item": item["id"], "answer": answer,
                                            **({"telemetry": plan.telemetry} if plan else {})})
            if status not in (200, 201):  # 200: a resent answer the server had already stored
                self.counts["errors"] += 1
                return False
            self.counts["answers_stored"] += 1
            if "next" in body and not self.ask_next:
                status, body = 200, body["next"]  # as the browser does: the answer carries the next item
            else:
                status, body = await self.call(session, "GET", "next", f"/api/v1/sessions/{token}/next/")

    async def _item_answer(self, item: dict[str, Any], link: dict[str, str], answer_key: dict[str, Any],
                           fails_screening: bool) -> tuple[Any, Plan | None]:
        """The answer to one item, after the time it takes (a writer's plan, or a think time)."""
        plan = None
        if item["kind"] == ItemKind.REWRITE and link["participant"] in self.truth:
            plan = await self.written(item, link["participant"])
            await asyncio.sleep(plan.seconds + 0.05)  # the writing takes its time on the server's clock too
        elif self.think_time:
            await asyncio.sleep(self.rng.expovariate(1 / self.think_time))
        answer = plan.text if plan else self._answer(item, answer_key.get(item["id"], {}), fails_screening)
        return answer, plan

    async def run(self, *, participants: int, concurrency: int, ramp_up: float = 0.0) -> float:
        # optional: aiohttp is needed only by the HTTP simulation
        import aiohttp

        semaphore = asyncio.Semaphore(concurrency)
        connector = aiohttp.TCPConnector(limit=concurrency)
        timeout = aiohttp.ClientTimeout(total=120)

        # No shared cookie jar: the simulated participants are different browsers (each proves its session with
        # the token it holds).
        async with aiohttp.ClientSession(connector=connector, timeout=timeout,
                                         cookie_jar=aiohttp.DummyCookieJar()) as session:
            async def one(index: int) -> None:
                if ramp_up:  # arrivals spread evenly over the ramp-up, as when a study opens on a platform
                    await asyncio.sleep(ramp_up * index / participants)
                async with semaphore:
                    await self.participant(session, index)

            started = time.perf_counter()
            try:
                await asyncio.gather(*(one(i) for i in range(participants)))
            finally:
                await sync_to_async(connections.close_all)()  # the answer-key thread's connection
            return time.perf_counter() - started


def _other_rewrites(public_id: str) -> list[str]:
    """The rewrites other writers stored for the item behind `public_id` (what a copier finds shared elsewhere)."""

    reservation = Reservation.objects.filter(public_id=public_id).values_list("study_item_id", "participant_id").first()
    if reservation is None:
        return []
    return list(Response.objects.filter(study_item_id=reservation[0]).exclude(participant_id=reservation[1])
                .values_list("answer", flat=True))


def percentiles(values: list[float]) -> dict[str, float | int]:
    if not values:
        return {"n": 0}
    ms = np.asarray(values) * 1000
    return {"n": len(values), "p50_ms": round(float(np.percentile(ms, 50)), 1),
            "p95_ms": round(float(np.percentile(ms, 95)), 1), "p99_ms": round(float(np.percentile(ms, 99)), 1)}


class Command(JsonCommand):
    help = "Play simulated participants over the HTTP annotator API (demo data and load tests)."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--study", required=True)
        parser.add_argument("--participants", type=int, default=10)
        parser.add_argument("--accuracy", default="0.85",
                            help="Probability of a correct answer, or 'published' (the instance's published votes/5)")
        parser.add_argument("--accuracy-file", help="JSON {item external id: probability correct}.")
        parser.add_argument("--screen-fail", type=float, default=0.0, help="Share of participants failing screening.")
        parser.add_argument("--concurrency", type=int, default=10)
        parser.add_argument("--batches-each", type=int, default=1)
        parser.add_argument("--base-url", default="http://127.0.0.1:8000")
        parser.add_argument("--seed", type=int, default=0)
        parser.add_argument("--think-time", type=float, default=0.0, help="Mean seconds per item (exponential).")
        parser.add_argument("--ramp-up", type=float, default=0.0,
                            help="Seconds over which the participants arrive (0: all at once).")
        parser.add_argument("--copy-rate", type=float, default=0.0,
                            help="Rewrite studies: share of rewrites first submitted as a copy of the source.")
        parser.add_argument("--sloppy-rate", type=float, default=0.0,
                            help="Rewrite studies: share of writers whose rewrites drop the content.")
        parser.add_argument("--ask-next", action="store_true",
                            help="Call `next` after every answer, ignoring the answer's `next` (a client of the "
                                 "older API: two requests per item).")
        parser.add_argument("--writers", default="",
                            help="Rewrite studies: shares of writer kinds sending writing telemetry, e.g. "
                                 "careful=0.6,paster=0.15,machine=0.15,copier=0.1 (annotation/management/"
                                 "simulated_writers.py). Their writing takes real time.")
        parser.add_argument("--copier-delay", type=float, default=0.0,
                            help="--writers: seconds copiers wait before starting (so there is something to copy).")
        parser.add_argument("--writers-out", help="--writers: write each writer's kind and rewrites as JSON here.")
        parser.add_argument("--latencies-out", help="Write raw latencies (seconds) per endpoint as JSON here.")

    def run(self, **options: Any) -> dict[str, Any]:
        study = Study.objects.filter(slug=options["study"]).first()
        if study is None:
            raise ApplicationError(f"--study: no study with slug '{options['study']}'.")
        use_published = options["accuracy"] == "published"
        try:
            accuracy = 0.85 if use_published else float(options["accuracy"])
        except ValueError:
            raise ApplicationError(
                f"--accuracy must be a probability or 'published', not {options['accuracy']!r}."
            ) from None
        if not all(0 <= value <= 1 for value in (accuracy, options["screen_fail"], options["copy_rate"],
                                                    options["sloppy_rate"])):
            raise ApplicationError("--accuracy, --screen-fail, --copy-rate and --sloppy-rate must be between 0 and 1.")
        if options["participants"] < 1 or options["concurrency"] < 1:
            raise ApplicationError("--participants and --concurrency must be at least 1.")
        item_accuracy = {}
        if options["accuracy_file"]:
            path = Path(options["accuracy_file"])
            if not path.exists():
                raise ApplicationError(f"--accuracy-file: {path} not found.")
            item_accuracy = {str(k): float(v) for k, v in json.loads(path.read_text()).items()}
        crowd = Crowd(study=study, base_url=options["base_url"], accuracy=accuracy, use_published=use_published,
                      item_accuracy=item_accuracy, screen_fail=options["screen_fail"],
                      batches_each=options["batches_each"], seed=options["seed"], think_time=options["think_time"],
                      copy_rate=options["copy_rate"], sloppy_rate=options["sloppy_rate"],
                      writers=writers_parse(options["writers"]) if options["writers"] else None,
                      copier_delay=options["copier_delay"], ask_next=options["ask_next"])
        try:
            elapsed = asyncio.run(crowd.run(participants=options["participants"],
                                            concurrency=options["concurrency"], ramp_up=options["ramp_up"]))
        except OSError as exc:
            raise ApplicationError(f"--base-url {options['base_url']}: cannot connect ({exc}).") from exc
        if options["latencies_out"]:
            Path(options["latencies_out"]).write_text(json.dumps(crowd.latencies))
        if options["writers_out"]:
            Path(options["writers_out"]).write_text(json.dumps(crowd.truth, indent=1))
        n_requests = sum(len(v) for v in crowd.latencies.values())
        return {
            "study": study.slug,
            "participants": options["participants"],
            "concurrency": options["concurrency"],
            "elapsed_s": round(elapsed, 3),
            "requests": n_requests,
            "requests_per_s": round(n_requests / elapsed, 1) if elapsed else None,
            "endpoints": {name: {**percentiles(crowd.latencies[name]),
                                 "rps": round(len(crowd.latencies[name]) / elapsed, 1) if elapsed else None,
                                 "status": dict(crowd.statuses[name])}
                          for name in ENDPOINTS if crowd.latencies.get(name)},
            **{key: int(value) for key, value in crowd.counts.items()},
        }
