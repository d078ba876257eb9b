"""Fake `seconds` against a live server: speed is measured by the server.

The attack: a bot answered 16 items in 0.94 s while sending `seconds: 22`; it was stored as 22 s and recommended
`approve` with no flag. `seconds: 1e308` was accepted.
"""
from __future__ import annotations

import time

import pytest

from annotation.models import Response
from annotation.selectors import participant_recommendations, reservation_expected_answer
from annotation.services.answers import MAX_CLIENT_SECONDS
from tests.adversarial.crowd import Browser
from tests.annotation.helpers import make_study
from tests.helpers import assert_api_error


@pytest.mark.django_db(transaction=True)
def test_a_bot_claiming_22_seconds_per_item_is_flagged_by_server_time(live_server):
    study = make_study(n_instances=12, k=2, per_batch=8, slug="speed", min_seconds_per_item=2.0)
    bot = Browser(live_server.url, study.slug)
    bot.open(participant="bot", platform="anonymous")
    bot.consent_and_start()
    started = time.monotonic()
    bot.answer_all(seconds=22)
    assert time.monotonic() - started < 8 * 2.0  # it really was fast
    rows = Response.objects.filter(participant__external_id="bot", is_screening=False)
    assert rows.count() == 8
    assert set(rows.values_list("seconds", flat=True)) == {22.0}  # what it claimed: kept as information
    assert max(rows.values_list("server_seconds", flat=True)) < 2.0  # what the server measured
    row = next(r for r in participant_recommendations(study=study) if r["participant"] == "bot")
    assert row["speeder"] is True and row["median_seconds"] < 2.0
    assert any("server-measured" in e and "minimum of 2 s" in e for e in row["evidence"]), row["evidence"]


@pytest.mark.django_db(transaction=True)
def test_a_participant_who_takes_their_time_is_not_flagged(live_server):
    study = make_study(n_instances=6, k=2, per_batch=3, slug="slow", min_seconds_per_item=0.5)
    person = Browser(live_server.url, study.slug)
    person.open(participant="person", platform="anonymous")
    person.consent_and_start()
    while (item := person.call("GET", "next/").json()["item"]) is not None:
        time.sleep(0.7)
        answer = reservation_expected_answer(public_id=item["id"])
        response = person.call("POST", "answers/", {"item": item["id"], "answer": answer, "seconds": 0.1})
        assert response.status_code == 201
    row = participant_recommendations(study=study)[0]
    assert row["speeder"] is False and row["median_seconds"] >= 0.7  # the server's 0.7 s, not the claimed 0.1 s


@pytest.mark.django_db(transaction=True)
def test_absurd_seconds_are_bounded_or_refused(live_server):
    study = make_study(n_instances=6, k=2, per_batch=3, slug="absurd")
    bot = Browser(live_server.url, study.slug)
    bot.open(participant="bot", platform="anonymous")
    bot.consent_and_start()
    item = bot.call("GET", "next/").json()["item"]
    url = f"{bot.base}sessions/{bot.token}/answers/"
    answer = reservation_expected_answer(public_id=item["id"])
    for raw in ("1e400", "-5", '"22"x', "NaN", "Infinity", "true"):
        response = bot.http.post(url, data=f'{{"item": "{item["id"]}", "answer": "{answer}", "seconds": {raw}}}',
                                 headers={"Content-Type": "application/json"}, timeout=30)
        assert response.status_code == 400 and response.json()["error"]["code"] in ("invalid", "parse_error"), raw
    assert not Response.objects.exists()
    stored = bot.call("POST", "answers/", {"item": item["id"], "answer": answer, "seconds": 1e308})
    assert stored.status_code == 201
    assert Response.objects.get().seconds == MAX_CLIENT_SECONDS
    assert_api_error(bot.call("POST", "answers/", {"item": item["id"], "answer": "S2-S1" if answer == "S1-S2" else
                                               "S1-S2", "seconds": 1}), code="answer_conflict", status=409)
