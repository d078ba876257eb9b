"""The consent screen of a PASTEL-persona rewrite study in Chromium: the researcher's text, the generated "What we
record" statement naming each persona question, and the explicit-consent statement with its own tick, which must be
ticked before the session moves on; the receipt code is shown; axe finds nothing critical or serious."""
from __future__ import annotations

from typing import Any

import pytest

from annotation.models import Batch
from annotation.services.persona_questions import PERSONA_QUESTIONS
from annotation.services.rewrites import rewrite_study_create
from annotation.services.study_settings import study_settings_build
from tests.annotation.accessibility import assert_accessible

# The browser fixtures (one Chromium per module, screenshots): imported, not a conftest.py.
from tests.annotation.conftest_browser import *  # noqa: F403
from tests.annotation.test_views_browser import on_screen

pytestmark = [pytest.mark.django_db(transaction=True, serialized_rollback=True), pytest.mark.browser]
SPECIAL = "I explicitly agree to be asked my ethnicity and my political orientation."


def test_the_consent_screen_of_a_pastel_study_needs_the_special_tick(page: Any, live_server: Any, shots: Any) -> None:
    rewrite_study_create(
        slug="pastel", sources=[("s1", "hey r u free on friday for the thing lol")], target_style="formal",
        persona=["pastel"], filters={"min_words": 0},
        settings=study_settings_build(
            annotators_per_item=2, items_per_batch=1, max_batches=1, consent_text="Our own words about the study.",
            special_category_consent=SPECIAL,
        ),
    )
    pid = "5f0c1a2b3c4d5e6f7a8b9c0d"
    page.goto(f"{live_server.url}/s/pastel/?PROLIFIC_PID={pid}&STUDY_ID=S&SESSION_ID=T")
    on_screen(page, "consent")
    assert "Our own words about the study." in page.inner_text("#consent-researcher-text")
    statement = page.inner_text("#consent-statement")
    for question in PERSONA_QUESTIONS.values():
        assert question["text"] in statement
    assert "special categories" in page.inner_text("#consent-special")
    assert page.is_visible("#special-consent") and SPECIAL in page.inner_text("#special-consent-text")
    page.wait_for_function("document.querySelector('#consent-receipt').textContent.includes('-')")
    receipt = page.inner_text("#consent-receipt")
    assert Batch.objects.get(participant__external_id=pid).consent_receipt == receipt
    assert_accessible(page, "consent screen with special-category consent")
    shots(page, "consent-special")

    page.click("#consent-agree")  # without the tick: refused on the page, nothing sent
    page.wait_for_function("document.querySelector('#special-consent-error').textContent.length > 0")
    assert page.evaluate("document.activeElement.id") == "special-consent-tick"
    batch = Batch.objects.get(participant__external_id=pid)
    assert batch.state == Batch.State.CONSENT and batch.consent_version_id is None
    assert_accessible(page, "consent screen with the tick missing")

    page.check("#special-consent-tick")
    page.click("#consent-agree")
    on_screen(page, "eligibility")
    batch.refresh_from_db()
    assert batch.consent_version is not None and batch.special_consented_at is not None
    assert SPECIAL in batch.consent_version.text
