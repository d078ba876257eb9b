"""A bot farm against a live server: many sessions from one address, reserving slots and never answering.

The attack: 36 sessions in 2.9 s reserved every slot of a study for the whole 30-minute batch limit, and 3,000 sessions
from one address all got 201. Now: most are refused with 429 (+ Retry-After), the ones let in give their slots
back after the first-answer grace period, and a real participant arriving afterwards is served.
"""
from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from annotation.celery_tasks import release_expired_reservations_task
from annotation.models import Batch, Reservation
from tests.adversarial import crowd
from tests.adversarial.crowd import Browser
from tests.annotation.helpers import make_study
from tests.helpers import assert_api_error

rate_limits = crowd.rate_limits  # the fixture

GRACE = 2  # seconds: the test's first-answer grace period (the default is minutes)
BOT_ADDRESS = "203.0.113.7"
REAL_ADDRESS = "198.51.100.20"


def _farm(live_server, slug: str, n: int, *, address: str | None = BOT_ADDRESS, spoof: bool = False) -> list:
    def one(i: int):
        headers_address = f"10.0.{i // 250}.{i % 250}" if spoof else address
        bot = Browser(live_server.url, slug, address=headers_address)
        return bot, bot.open(participant=f"bot-{i}", platform="anonymous")

    with ThreadPoolExecutor(max_workers=8) as pool:
        return list(pool.map(one, range(n)))


@pytest.mark.django_db(transaction=True)
def test_bot_farm_is_throttled_and_its_slots_come_back_after_the_grace_period(live_server, rate_limits):
    rate_limits(address="6/min", proxies=1)  # behind one trusted proxy: X-Forwarded-For names the client
    study = make_study(n_instances=8, k=1, per_batch=4, slug="farm", first_answer_grace_seconds=GRACE,
                       time_limit_minutes=30)
    opened = _farm(live_server, study.slug, 40)
    admitted = [bot for bot, r in opened if r.status_code == 201]
    refused = [r for _, r in opened if r.status_code == 429]
    # A fixed window: at most 6 per window, and a burst can straddle two windows.
    assert 1 <= len(admitted) <= 12 and len(refused) == 40 - len(admitted), [r.status_code for _, r in opened]
    error = assert_api_error(refused[0], code="throttled", status=429)
    assert "throttled" in error["message"].lower()
    assert 1 <= int(refused[0].headers["Retry-After"]) <= 60
    # The admitted bots take every slot (8 items, k = 1, 4 per batch) and never answer.
    hoarders = 0
    for bot in admitted:
        bot.call("POST", "consent/", {"agree": True})
        if bot.call("POST", "start/", {}).status_code == 200:
            hoarders += 1
    assert hoarders == 2 and Reservation.objects.filter(released=False).count() == 8
    real = Browser(live_server.url, study.slug, address=REAL_ADDRESS)  # another address: not throttled
    assert_api_error(real.open(participant="real-1", platform="anonymous"), code="no_work_available", status=409)
    # The hoarding lasts the grace period, not the 30-minute batch limit: the serving path itself releases the
    # bots' reservations (no periodic task has run).
    time.sleep(GRACE + 0.5)
    real = Browser(live_server.url, study.slug, address=REAL_ADDRESS)
    assert real.open(participant="real-2", platform="anonymous").status_code == 201
    started = real.consent_and_start()
    assert started["state"] == "items" and started["progress"]["total"] == 4
    assert len(real.answer_all()) == 4
    # The periodic task moves the bots' batches to `expired` and releases whatever they still hold.
    result = release_expired_reservations_task()
    assert result["expired_batches"] == 2
    assert Batch.objects.filter(state=Batch.State.EXPIRED).count() == 2
    bot_batches = Batch.objects.filter(participant__external_id__startswith="bot-", state=Batch.State.EXPIRED)
    assert not Reservation.objects.filter(batch__in=bot_batches, released=False).exists()
    # A bot's late answer after the grace period is refused: the batch has expired.
    bot = next(b for b in admitted if Batch.objects.filter(token=b.token, state=Batch.State.EXPIRED).exists())
    item = Reservation.objects.filter(batch__token=bot.token).first()
    assert_api_error(bot.call("POST", "answers/", {"item": item.public_id, "answer": "S1-S2"}), code="expired",
                 status=410)


@pytest.mark.django_db(transaction=True)
def test_forged_forwarded_for_headers_do_not_escape_the_limit_without_a_trusted_proxy(live_server, rate_limits):
    rate_limits(address="5/min", proxies=0)
    study = make_study(n_instances=8, k=3, per_batch=2, slug="spoof")
    opened = _farm(live_server, study.slug, 20, spoof=True)  # a new X-Forwarded-For on every request
    assert sum(r.status_code == 201 for _, r in opened) <= 10
    assert sum(r.status_code == 429 for _, r in opened) >= 10


@pytest.mark.django_db(transaction=True)
def test_the_per_study_limit_holds_across_addresses_and_counts_only_requests_admitted_by_address(
        live_server, rate_limits):
    rate_limits(address="3/min", study="8/min", proxies=1)
    study = make_study(n_instances=8, k=5, per_batch=2, slug="per-study")
    # One noisy address: its refused requests must not use up the study's allowance.
    noisy = _farm(live_server, study.slug, 20)
    assert sum(r.status_code == 201 for _, r in noisy) <= 6
    statuses = []
    for i in range(12):
        browser = Browser(live_server.url, study.slug, address=f"198.51.100.{i + 1}")
        statuses.append(browser.open(participant=f"p-{i}", platform="anonymous").status_code)
    admitted_noisy = sum(r.status_code == 201 for _, r in noisy)
    assert statuses.count(201) >= min(12, 8 - admitted_noisy)  # the study's allowance was left for them
    assert statuses.count(429) >= 12 - (16 - admitted_noisy)  # and it is a ceiling: two windows at most


@pytest.mark.django_db(transaction=True)
def test_a_cap_on_open_batches_answers_busy_until_the_grace_period_frees_room(live_server, rate_limits):
    rate_limits(proxies=1)
    study = make_study(n_instances=12, k=3, per_batch=2, slug="capped", first_answer_grace_seconds=GRACE,
                       max_open_batches=2)
    bots = [Browser(live_server.url, study.slug, address=BOT_ADDRESS) for _ in range(2)]
    for i, bot in enumerate(bots):
        assert bot.open(participant=f"bot-{i}", platform="anonymous").status_code == 201
        bot.consent_and_start()
    real = Browser(live_server.url, study.slug, address=REAL_ADDRESS)
    response = real.open(participant="real", platform="anonymous")
    error = assert_api_error(response, code="study_busy", status=409)
    assert response.headers["Retry-After"] == str(error["details"]["retry_after"])
    time.sleep(GRACE + 0.5)
    assert real.open(participant="real", platform="anonymous").status_code == 201
    assert real.consent_and_start()["state"] == "items"
    assert len(real.answer_all()) == 2
