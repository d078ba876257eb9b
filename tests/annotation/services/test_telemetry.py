"""Writing telemetry of free-text answers through the participant API: stored with the answer and checked against
the text and the server's clock; malformed or oversized blocks refused with a 400 and nothing stored; a missing
block allowed ("no telemetry"); the hot path leaves answers carrying telemetry to the general path."""
from __future__ import annotations

import copy
from datetime import timedelta
from typing import Any

import pytest
from django.utils import timezone
from rest_framework.test import APIClient

from annotation.models import Reservation, Response, Study, TelemetryStatus
from annotation.services import answers
from annotation.services.rewrites import rewrite_study_create
from annotation.services.study_settings import study_settings_build
from annotation.services.telemetry import CONSENT_NOTICE, MAX_EVENTS
from tests.annotation.helpers import Participant, make_study, serving_path  # noqa: F401 - a fixture
from tests.helpers import assert_api_error

pytestmark = pytest.mark.django_db
SOURCES = [("s1", "hey r u free on friday for the thing lol"), ("s2", "gonna be late again for the meeting today")]
REWRITE = "Would you be available on Friday for the event?"


def telemetry(**changes: Any) -> dict[str, Any]:
    """A careful typist's block for REWRITE (47 characters): typed with a few corrections, one short tab switch."""
    block = {
        "version": 1, "keystrokes": 60, "deletions": 5, "typed_chars": 53, "deleted_chars": 5, "pasted_chars": 0,
        "paste_count": 0, "pastes": [], "first_key_ms": 4200, "submit_ms": 31000, "active_ms": 17000,
        "focus_loss_count": 1, "focus_loss_ms": 3000,
        "focus_losses": [{"at_ms": 9000, "ms": 3000, "next_insert_chars": 1, "next_insert_after_ms": 400}],
    }
    block.update(changes)
    return block


def writer(slug: str = "tel", pid: str = "w1") -> tuple[Participant, dict[str, Any]]:
    """A writer of a rewrite study (k = 2, two sources) at their first item, served 60 s ago on the server's clock."""
    if not Study.objects.filter(slug=slug).exists():
        rewrite_study_create(
            slug=slug, sources=SOURCES, target_style="formal", eligibility_questions=[], filters={"min_words": 0},
            settings=study_settings_build(annotators_per_item=2, items_per_batch=2),
        )
    person = Participant(APIClient(), slug, pid)
    person.start()
    person.consent()
    item = person.next().json()["item"]
    Reservation.objects.filter(public_id=item["id"]).update(served_at=timezone.now() - timedelta(seconds=60))
    return person, item


def post(person: Participant, item: dict[str, Any], text: str, block: Any = None, *, send: bool = True) -> Any:
    body: dict[str, Any] = {"item": item["id"], "answer": text}
    if send:
        body["telemetry"] = block
    return person.client.post(f"/api/v1/sessions/{person.token}/answers/", body, format="json")


@pytest.mark.usefixtures("serving_path")
def test_consistent_telemetry_is_stored_with_the_answer_on_the_servers_clock():
    person, item = writer()
    response = post(person, item, REWRITE, telemetry())
    assert response.status_code == 201, response.content
    row = Response.objects.get(reservation__public_id=item["id"])
    assert row.telemetry_status == TelemetryStatus.CONSISTENT
    assert row.telemetry["page"] == telemetry() and row.telemetry["problems"] == []
    server = row.telemetry["server"]
    assert server["text_chars"] == len(REWRITE) and 60 <= server["seconds"] < 70
    first_key = timezone.datetime.fromisoformat(server["first_key_at"])
    assert abs((first_key - row.shown_at).total_seconds() - 4.2) < 0.01  # placed on the server's clock
    assert server["answered_at"] == row.answered_at.isoformat()


@pytest.mark.usefixtures("serving_path")
def test_a_missing_block_is_allowed_and_stored_as_no_telemetry():
    person, item = writer()
    assert post(person, item, REWRITE, send=False).status_code == 201
    assert post(*writer(pid="w2"), REWRITE, None).status_code == 201  # an explicit null: the same
    rows = Response.objects.filter(study__slug="tel")
    assert rows.count() == 2 and {(r.telemetry, r.telemetry_status) for r in rows} == {(None, "none")}


@pytest.mark.parametrize(("change", "problem"), [
    ({"typed_chars": 10}, f"cannot make a text of {len(REWRITE)} characters"),
    ({"submit_ms": 600_000}, "the server measured"),
    ({"first_key_ms": 40_000}, "first key comes after the submit"),
    ({"active_ms": 30_000}, "add up to more than the time on the item"),
    ({"paste_count": 0, "pasted_chars": 0, "pastes": [{"at_ms": 100, "chars": 48, "matched_source": False}]},
     "listed pastes exceed"),
    ({"focus_loss_ms": 100}, "listed focus losses exceed"),
    ({"typed_chars": 53, "first_key_ms": None}, "no first key time"),
])
def test_inconsistent_telemetry_is_stored_and_marked_with_the_problem(change, problem):
    person, item = writer()
    response = post(person, item, REWRITE, telemetry(**change))
    assert response.status_code == 201, response.content
    row = Response.objects.get(reservation__public_id=item["id"])
    assert row.telemetry_status == TelemetryStatus.INCONSISTENT
    assert any(problem in p for p in row.telemetry["problems"]), row.telemetry["problems"]


def _bad_blocks() -> list[tuple[Any, str]]:
    too_many = telemetry(paste_count=MAX_EVENTS + 1, pasted_chars=51,
                         pastes=[{"at_ms": 1, "chars": 1, "matched_source": False}] * (MAX_EVENTS + 1))
    unknown = telemetry()
    unknown["keys"] = "h,e,y"  # the keys typed: never accepted
    missing = telemetry()
    del missing["active_ms"]
    return [
        ("not an object", "must be an object"), ([1, 2], "must be an object"), (unknown, "unknown field"),
        (missing, "misses field"), (telemetry(version=2), "version"), (telemetry(keystrokes=-1), "keystrokes"),
        (telemetry(keystrokes=True), "keystrokes"), (telemetry(active_ms=1.5), "active_ms"),
        (telemetry(submit_ms=10**12), "submit_ms"), (telemetry(pastes={"at_ms": 1}), "pastes must be a list"),
        (telemetry(paste_count=1, pastes=[{"at_ms": 1, "chars": 3}]), "pastes[0]"),
        (telemetry(paste_count=1, pastes=[{"at_ms": 1, "chars": 3, "matched_source": "yes"}]), "matched_source"),
        (too_many, f"at most {MAX_EVENTS} events"), ({**telemetry(), "pad": "x" * 9000}, "bytes"),
    ]


@pytest.mark.usefixtures("serving_path")
@pytest.mark.parametrize(("block", "words"), _bad_blocks())
def test_malformed_or_oversized_telemetry_is_a_400_and_nothing_is_stored(block, words):
    person, item = writer()
    response = post(person, item, REWRITE, copy.deepcopy(block))
    assert_api_error(response, code="invalid", status=400)
    body = response.json()["error"]
    assert "telemetry" in body["message"] and words in body["message"], body
    assert "telemetry" in body["details"]
    assert not Response.objects.filter(study__slug="tel").exists()
    assert Reservation.objects.get(public_id=item["id"]).answered_at is None  # the item is still open
    assert post(person, item, REWRITE, telemetry()).status_code == 201  # the same answer, well formed: stored


@pytest.mark.usefixtures("serving_path")
def test_telemetry_on_an_answer_chosen_from_choices_is_refused():
    study = make_study(n_instances=4, per_batch=2)
    person = Participant(APIClient(), study.slug, "ORD-1")
    person.start()
    person.consent()
    item = person.next().json()["item"]
    response = person.client.post(f"/api/v1/sessions/{person.token}/answers/",
                                  {"item": item["id"], "answer": item["choices"][0], "telemetry": telemetry()},
                                  format="json")
    assert_api_error(response, code="invalid", status=400)
    assert "free-text answers only" in response.json()["error"]["message"]
    assert not Response.objects.filter(study=study).exists()


def test_an_answer_with_telemetry_takes_the_general_path_and_one_without_the_fast_one(monkeypatch):
    calls: list[bool] = []
    original = answers._answer_locked

    def general(**kwargs: Any) -> Any:
        calls.append(kwargs.get("telemetry") is not None)
        return original(**kwargs)

    monkeypatch.setattr(answers, "_answer_locked", general)
    person, item = writer()
    assert post(person, item, REWRITE, send=False).status_code == 201
    assert calls == []  # the hot path stored it
    second = person.next().json()["item"]
    Reservation.objects.filter(public_id=second["id"]).update(served_at=timezone.now() - timedelta(seconds=60))
    assert post(person, second, "I shall be late for the meeting again today.", telemetry(typed_chars=60)).status_code \
        == 201
    assert calls == [True]


def test_a_repeated_answer_keeps_the_first_telemetry():
    person, item = writer()
    assert post(person, item, REWRITE, telemetry()).status_code == 201
    again = post(person, item, REWRITE, telemetry(keystrokes=1))
    assert again.status_code == 200 and again.json()["stored"] is False
    assert Response.objects.get(reservation__public_id=item["id"]).telemetry["page"]["keystrokes"] == 60


def test_the_consent_screen_of_a_rewrite_study_says_what_telemetry_records(client):
    rewrite_study_create(
        slug="tel", sources=SOURCES, target_style="formal", eligibility_questions=[], filters={"min_words": 0},
        settings=study_settings_build(consent_text="Our own consent text."),
    )
    page = client.get("/s/tel/").content.decode()
    assert "Our own consent text." in page and 'id="telemetry-notice"' in page
    assert "never records which keys you press" in CONSENT_NOTICE and "never records which keys you press" in page
    ordering = make_study(n_instances=2, slug="ord")
    assert 'id="telemetry-notice"' not in client.get(f"/s/{ordering.slug}/").content.decode()


FORGED = {"keystrokes": 1_000_000, "typed_chars": 1_000_000, "submit_ms": 1, "active_ms": 0, "first_key_ms": 0,
          "deletions": 0, "deleted_chars": 0, "focus_loss_count": 0, "focus_loss_ms": 0, "focus_losses": []}


@pytest.mark.parametrize(("change", "bounds"), [
    # The attack run's block: a million keys and characters, 1 ms on the item, no typing time, for a short rewrite.
    (FORGED, ["typing-rate bound: 1000000 keys pressed", "typing-rate bound: 1000000 characters typed",
              "text-length bound"]),
    # A bot that answers at once but claims a careful typist's 31 s: the server's 60 s are not the window, the
    # page's own 2 s are.
    ({"keystrokes": 200, "typed_chars": 70, "submit_ms": 2000, "first_key_ms": 100, "active_ms": 1500,
      "focus_loss_count": 0, "focus_loss_ms": 0, "focus_losses": []},
     ["typing-rate bound: 200 keys pressed", "typing-rate bound: 70 characters typed"]),
    # Typing claimed to hide a paste: more kept than the text holds.
    ({"typed_chars": 300, "keystrokes": 300}, ["text-length bound: 300 characters typed"]),
    ({"pasted_chars": 500, "paste_count": 1, "pastes": [{"at_ms": 5000, "chars": 500, "matched_source": True}]},
     ["paste bound: 500 characters pasted"]),
])
def test_telemetry_beyond_a_physical_bound_is_inconsistent_naming_the_bound(change, bounds):
    person, item = writer()
    assert post(person, item, REWRITE, telemetry(**change)).status_code == 201
    row = Response.objects.get(reservation__public_id=item["id"])
    assert row.telemetry_status == TelemetryStatus.INCONSISTENT
    for bound in bounds:
        assert any(p.startswith(bound) for p in row.telemetry["problems"]), (bound, row.telemetry["problems"])


@pytest.mark.parametrize("change", [
    # A fast typist at 15 characters a second over the whole item, who retyped the text twice.
    {"keystrokes": 160, "typed_chars": 147, "deleted_chars": 100, "deletions": 20, "submit_ms": 10_000,
     "first_key_ms": 500, "active_ms": 8000, "focus_loss_count": 0, "focus_loss_ms": 0, "focus_losses": []},
    # The original pasted and typed over (the selection the typing replaced counts as deleted).
    {"pasted_chars": 41, "paste_count": 1, "pastes": [{"at_ms": 2000, "chars": 41, "matched_source": True}],
     "deleted_chars": 46},
    # A key held down (repeating at 30 a second) for 20 s of a 31 s item, and trailing spaces the page trims.
    {"keystrokes": 700, "typed_chars": 60, "deleted_chars": 5},
])
def test_people_at_the_edge_of_the_bounds_stay_consistent(change):
    person, item = writer()
    assert post(person, item, REWRITE, telemetry(**change)).status_code == 201
    row = Response.objects.get(reservation__public_id=item["id"])
    assert row.telemetry["problems"] == [] and row.telemetry_status == TelemetryStatus.CONSISTENT
