"""The simulated writers of `simulate_annotators --writers`: their telemetry is what the page would send (accepted by
the server's parser, consistent with its text and with the time the writer takes) and their behaviour is the one
described (speeds, pastes, time away, copies)."""
from __future__ import annotations

import random
from datetime import timedelta

import pytest
from django.utils import timezone

from annotation.management.simulated_writers import (
    FORGERIES,
    plan_careful,
    plan_copier,
    plan_forger,
    plan_machine,
    plan_paster,
    rewrite_text,
    writers_parse,
)
from annotation.services.telemetry import telemetry_check, telemetry_parse
from annotation.services.writing_signals import measures
from core.errors import ApplicationError

SOURCES = ["hey r u free on friday for the thing lol", "i dont think thats a good idea tbh",
           "gonna be late again for the meeting today sorry", "that show was awesome i really liked it"]


def _checked(plan):
    record, status = telemetry_check(telemetry=telemetry_parse(plan.telemetry), text=plan.text.strip(),
                                     shown_at=timezone.now() - timedelta(seconds=plan.seconds + 0.05),
                                     answered_at=timezone.now())
    return record, status


@pytest.mark.parametrize("seed", range(40))
def test_every_writer_kind_sends_consistent_telemetry(seed: int) -> None:
    rng = random.Random(seed)
    source = SOURCES[seed % len(SOURCES)]
    plans = {"careful": plan_careful(rng, source), "paster": plan_paster(rng, source),
             "machine": plan_machine(rng, source), "copier": plan_copier(rng, source, [rewrite_text(rng, source)])}
    for kind, plan in plans.items():
        record, status = _checked(plan)
        assert status == "consistent", (kind, record["problems"])
        assert "_back" not in str(plan.telemetry)
    careful = _checked(plans["careful"])[0]
    speed = measures.typing_speed(careful)
    assert speed is None or speed.score < 15  # a person's speed
    assert measures.mostly_pasted(careful).score < 0.5
    paster = _checked(plans["paster"])[0]
    assert measures.mostly_pasted(paster).score >= 0.95
    assert measures.typing_speed(_checked(plans["machine"])[0]).score >= 20
    assert plans["copier"].copied


def test_a_copier_with_nothing_to_copy_writes_its_own() -> None:
    plan = plan_copier(random.Random(1), SOURCES[0], [])
    assert not plan.copied and plan.text


def test_careful_writers_of_one_source_rarely_coincide() -> None:
    rng = random.Random(3)
    source = "i dont think thats a really good idea, maybe we should get some help"
    texts = [rewrite_text(rng, source) for _ in range(30)]
    matrix = measures.char_similarity([measures.normalize(t) for t in texts])
    pairs = [matrix[i][j] for i in range(30) for j in range(i + 1, 30) if texts[i] != texts[j]]
    assert len(set(texts)) >= 25 and sorted(pairs)[len(pairs) // 2] < 90


def test_the_mix_is_parsed_and_checked() -> None:
    assert writers_parse("careful=3,paster=1") == {"careful": 0.75, "paster": 0.25}
    for bad in ("careful", "robot=1", "careful=-1", "careful=0"):
        with pytest.raises(ApplicationError, match="--writers"):
            writers_parse(bad)


def test_forgers_are_caught_by_the_bounds_they_break_except_the_mimic() -> None:
    """Each forgery is a well-formed block (the parser accepts it); the server's check names the bound it breaks,
    and the mimic, a careful typist's block sent after the time it claims, passes (only the text signals can tell)."""
    broken = {"inflated": "typing-rate bound", "hurried": "typing-rate bound", "padded": "text-length bound"}
    seen = set()
    for seed in range(60):
        plan = plan_forger(random.Random(seed), SOURCES[seed % len(SOURCES)])
        forgery = plan.events["forgery"]
        seen.add(forgery)
        record, status = _checked(plan)
        # A hurried bot is caught when its claim is faster than a person: a short text sent in 2 s is not.
        within = forgery == "mimic" or (forgery == "hurried" and len(plan.text) <= 25 * plan.seconds + 10)
        if within:
            assert status == "consistent", record["problems"]
        else:
            assert status == "inconsistent" and any(p.startswith(broken[forgery]) for p in record["problems"]), (
                forgery, record["problems"])
    assert seen == set(FORGERIES)
