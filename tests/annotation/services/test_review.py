"""annotation.services.review: deciding rewrites (a rejection needs a reason, invalidates the rewrite and reopens its
slot; a rewrite is decided once) and the automatic review that `review_rewrites --auto` runs (`rewrite_keeps_meaning`,
`reviews_decide_pending`). The whole loop with writers, the admin queue and a corpus: test_rewrite_review.py."""
from __future__ import annotations

import pytest
from rest_framework.test import APIClient

from annotation.models import RejectionReason, Reservation, Response, RewriteReview, Study
from annotation.services.review import (
    AUTO_REVIEW_MIN_OVERLAP,
    review_decide,
    review_queue,
    reviews_decide_pending,
    rewrite_keeps_meaning,
)
from annotation.services.rewrites import rewrite_study_create
from annotation.services.study_settings import study_settings_build
from core.errors import ApplicationError
from tests.annotation.helpers import Participant

pytestmark = pytest.mark.django_db
SOURCES = [("s1", "hey r u free on friday for the thing lol"),
           ("s2", "gonna be late again for the meeting today sorry")]
FAITHFUL = {"s1": "Are you free on Friday for the event?", "s2": "I am going to be late for the meeting again today."}
SLOPPY = "The weather was lovely in Lisbon."


def rewrites(*texts_by_source: dict[str, str]) -> Study:
    """A rewrite study of the two sources; one writer per dict writes the text given for each source served."""
    study, _ = rewrite_study_create(
        slug="rev", sources=SOURCES, target_style="formal", eligibility_questions=[], filters={"min_words": 0},
        settings=study_settings_build(annotators_per_item=3, items_per_batch=2),
    )
    for index, texts in enumerate(texts_by_source):
        person = Participant(APIClient(), study.slug, f"writer-{index}")
        person.start()
        person.consent()
        for _ in SOURCES:
            item = person.next().json()["item"]
            source = item["texts"]["source"]
            source_id = next(key for key, text in SOURCES if text == source)
            response = person.answer(item["id"], texts[source_id])
            assert response.status_code == 201, response.content
    return study


def test_the_auto_review_rule_keeps_reordered_words_and_refuses_another_meaning() -> None:
    assert AUTO_REVIEW_MIN_OVERLAP == 60.0
    assert rewrite_keeps_meaning(source="Late again, sorry", rewrite="sorry, late AGAIN")
    assert not rewrite_keeps_meaning(source=SOURCES[1][1], rewrite=SLOPPY)
    assert rewrite_keeps_meaning(source=SOURCES[1][1], rewrite=SLOPPY, min_overlap=0)


def test_auto_review_rejects_changed_meanings_and_reopens_their_slots() -> None:
    study = rewrites(FAITHFUL, {"s1": SLOPPY, "s2": FAITHFUL["s2"]})
    sloppy = Response.objects.get(study=study, answer=SLOPPY)
    with pytest.raises(ApplicationError) as error:
        reviews_decide_pending(study=study, auto=True, min_overlap=101)
    assert error.value.field == "min_overlap" and not RewriteReview.objects.exclude(status="pending").exists()

    seen = []
    counts = reviews_decide_pending(study=study, auto=True, progress=lambda done, total: seen.append((done, total)))
    assert counts == {"reviewed": 4, "accepted": 3, "rejected": 1} and seen[-1] == (4, 4)
    review = RewriteReview.objects.get(response=sloppy)
    assert review.status == RewriteReview.Status.REJECTED and review.reason == RejectionReason.MEANING
    sloppy.refresh_from_db()
    assert sloppy.is_valid is False and Reservation.objects.get(pk=sloppy.reservation_id).released
    assert review_queue(study=study) == [] and reviews_decide_pending(study=study, auto=True)["reviewed"] == 0


def test_accept_all_and_one_decision_per_rewrite() -> None:
    study = rewrites({"s1": SLOPPY, "s2": SLOPPY})
    first = review_queue(study=study)[0]["response"]
    with pytest.raises(ApplicationError, match="a rejection needs a reason"):
        review_decide(response_id=first, decision="reject", reviewer=None)
    review_decide(response_id=first, decision="accept", reviewer=None)
    with pytest.raises(ApplicationError) as error:
        review_decide(response_id=first, decision="reject", reviewer=None, reason=RejectionReason.MEANING)
    assert error.value.status == 409
    assert reviews_decide_pending(study=study, auto=False) == {"reviewed": 1, "accepted": 1, "rejected": 0}
    assert set(RewriteReview.objects.values_list("status", flat=True)) == {"accepted"}
