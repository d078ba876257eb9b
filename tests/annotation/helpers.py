"""Shared builders for the annotation tests (not a conftest: the browser tests have their own)."""
from __future__ import annotations

from typing import Any

import pytest
from rest_framework.test import APIClient

from annotation.models import Study
from annotation.selectors import reservation_expected_answer, reservation_is_screening
from annotation.services.studies import study_create
from annotation.services.study_settings import SETTINGS_BY_NAME, study_settings_build
from tests.factories import ScreeningQuestionFactory, TaskInstanceFactory


def settings_pop(kwargs: dict[str, Any], **defaults: Any) -> Any:
    """The declared study settings taken out of a test's keywords (over its defaults), checked as the doors do."""
    given = {name: kwargs.pop(name) for name in list(kwargs) if name in SETTINGS_BY_NAME}
    return study_settings_build(**{**defaults, **given})


def make_study(*, n_instances: int = 6, slug: str = "s1", screening: int = 0, k: int = 3, per_batch: int = 4,
               eligibility: list[dict[str, Any]] | None = None, **kwargs: Any) -> Study:
    instances = TaskInstanceFactory.create_batch(n_instances)
    if screening:
        ScreeningQuestionFactory.create_batch(max(screening, 3))
    settings = settings_pop(kwargs, annotators_per_item=k, min_correct=min(kwargs.pop("m", 2), k),
                            items_per_batch=per_batch, screening_per_batch=screening, completion_code="DONE123",
                            redirect_url="https://app.prolific.com/submissions/complete?cc={code}")
    return study_create(
        slug=slug, item_kind="quadruple", corpus=[instances[0].corpus.name] if kwargs.pop("one_corpus", False)
        else None, eligibility_questions=eligibility or [], settings=settings, **kwargs,
    )


class Participant:
    """A participant driving the JSON API like the browser does."""

    def __init__(self, client: APIClient, slug: str, pid: str, platform: str = "prolific") -> None:
        self.client = client
        self.slug = slug
        self.pid = pid
        self.platform = platform
        self.token: str | None = None

    def start(self) -> dict[str, Any]:
        # A token this participant already holds proves it is the same client (as the browser's resume cookie).
        response = self.client.post(f"/api/v1/studies/{self.slug}/sessions/",
                                    {"participant": self.pid, "platform": self.platform, "token": self.token or ""},
                                    format="json")
        assert response.status_code in (200, 201), response.content
        self.token = response.json()["token"]
        return response.json()

    def consent(self) -> dict[str, Any]:
        # The separate tick of special-category questions goes along: a study that asks none ignores it.
        response = self.client.post(f"/api/v1/sessions/{self.token}/consent/",
                                    {"agree": True, "special_category": True}, format="json")
        assert response.status_code == 200, response.content
        return response.json()

    def next(self) -> Any:
        return self.client.get(f"/api/v1/sessions/{self.token}/next/")

    def answer(self, item: str, answer: Any) -> Any:
        return self.client.post(f"/api/v1/sessions/{self.token}/answers/", {"item": item, "answer": answer},
                                format="json")

    def play(self, *, correct: bool = True, fail_screening: bool = False) -> list[dict[str, Any]]:
        """Answer the whole batch; returns the items seen."""
        seen = []
        body = self.next().json()
        while True:
            if body["item"] is None:
                assert body == self.next().json()  # the last answer's `next` is what `next` answers
                return seen
            item = body["item"]
            seen.append(item)
            expected = reservation_expected_answer(public_id=item["id"])
            wrong = [c for c in item["choices"] if c != expected][0]
            screening = reservation_is_screening(public_id=item["id"])
            give = wrong if (screening and fail_screening) or (not screening and not correct) else expected
            response = self.answer(item["id"], give)
            assert response.status_code == 201, response.content
            body = response.json()["next"]  # the browser's flow: one request per item


@pytest.fixture(params=["fast", "general"])
def serving_path(request: Any, settings: Any) -> str:
    """Runs a test twice: with the PostgreSQL hot path for `next`/`answers`, and with the general ORM path only
    (the `ANNOTATION_HOT_PATH` setting)."""
    settings.ANNOTATION_HOT_PATH = request.param == "fast"
    return request.param


def run_participant(*, slug: str, pid: str, answer_for: Any, eligibility: dict[str, Any] | None = None,
                    client: APIClient | None = None) -> int:
    """One simulated participant through the JSON API as the browser drives it: start, consent, eligibility answers
    when the study asks, then `next` once and `answers` (each carrying the next item) until the batch is done.
    `answer_for(public item, the item's external id)` gives each answer; returns how many were stored. Tests of
    rating and rewrite studies drive every participant through this one function, so a change of the participant
    flow is mirrored here once."""
    from annotation.models import Reservation

    person = Participant(client or APIClient(), slug, pid)
    person.start()
    state = person.consent()["state"]
    if state == "eligibility":
        response = person.client.post(f"/api/v1/sessions/{person.token}/eligibility/",
                                      {"answers": eligibility or {}}, format="json")
        assert response.status_code == 200, response.content
    answered = 0
    response = person.next()
    assert response.status_code == 200, response.content
    body = response.json()
    while True:
        item = body["item"]
        if item is None:
            return answered
        external_id = Reservation.objects.select_related("study_item").get(public_id=item["id"]).study_item.external_id
        posted = person.answer(item["id"], answer_for(item, external_id))
        assert posted.status_code == 201, posted.content
        body = posted.json()["next"]  # the browser's flow: the answer's response carries the next item
        answered += 1
