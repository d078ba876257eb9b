"""Fixtures of the platform tests: a fake Prolific over real HTTP (tests/platforms/fake_prolific.py), an account on
it, and a published study whose participants have submissions there."""
from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from cryptography.fernet import Fernet

from annotation.models import Participant, Response, Study
from platforms.models import PlatformAccount, PlatformStudy
from tests import factories as f
from tests.platforms.fake_prolific import FakeProlific

TOKEN = "fake-prolific-token-0123456789abcdef"


@pytest.fixture
def platform_settings(settings: Any) -> Any:
    settings.STYLECROWD_ENCRYPTION_KEY = Fernet.generate_key().decode()
    settings.PLATFORM_HTTP_TIMEOUT_SECONDS = 15.0  # a timeout test lowers it (FakeProlific.fail)
    settings.PLATFORM_RETRY_BACKOFF_SECONDS = 0.01
    settings.STYLECROWD_PUBLIC_URL = "https://crowd.example.org"
    settings.PROLIFIC_API_TOKEN = None
    return settings


@pytest.fixture
def fake_prolific(platform_settings: Any) -> Iterator[FakeProlific]:
    fake = FakeProlific(token=TOKEN, answer_delay=2.5, settings=platform_settings, fault_timeout=1.0).start()
    platform_settings.PLATFORM_ALLOWED_API_URLS = [fake.url]
    yield fake
    fake.stop()
    # Every request the client sent, and every answer it read, matched Prolific's API description.
    assert fake.violations == [], fake.violations


@pytest.fixture
def prolific_account(db: Any, fake_prolific: FakeProlific) -> PlatformAccount:
    from platforms.services.accounts import account_create

    return account_create(name="lab", platform="prolific", token=TOKEN, api_url=fake_prolific.url,
                          workspace_id="a" * 24, project_id="b" * 24)


def hex_pid(n: int) -> str:
    return f"{n:024x}"


def paid_study(*, answers: list[list[str]] | None = None, **study_fields: Any) -> Study:
    """An active Prolific study whose participants p0, p1, … have 24-hex Prolific ids (ordering answers)."""
    study = f.StudyFactory(status=Study.Status.ACTIVE, platform="prolific", allow_anonymous=False,
                           target_hourly_pay=12, estimated_minutes=10, items_per_batch=2, annotators_per_item=3,
                           title="Which sentences share a style?", **study_fields)
    f.annotated_study(answers=answers or [["S2-S1"] * 3, ["S2-S1", "S1-S2", "S2-S1"]], study=study)
    for n, participant in enumerate(Participant.objects.filter(study=study).order_by("external_id")):
        Participant.objects.filter(pk=participant.pk).update(external_id=hex_pid(n + 1))
    return study


def on_prolific(study: Study, account: PlatformAccount, fake: FakeProlific, *,
                statuses: dict[str, str] | None = None, **fields: Any) -> PlatformStudy:
    """The study as if published on the fake: a Prolific study id, and one submission per participant."""
    from platforms.services.publish import platform_publish

    platform_publish(study=study, account=account, publish=True, **fields)
    platform_study = PlatformStudy.objects.get(study=study)
    for participant in Participant.objects.filter(study=study).order_by("external_id"):
        status = (statuses or {}).get(participant.external_id, "AWAITING REVIEW")
        fake.add_submission(platform_study.external_id, participant.external_id, status=status,
                            study_code=study.completion_code)
    return platform_study


def failed_checks(study: Study, participant: Participant, n: int = 2) -> None:
    """`n` failed attention checks for the participant (grounds for rejection from 2 on)."""
    for _ in range(n):
        question = f.ScreeningQuestionFactory()
        Response.objects.create(study=study, participant=participant, screening_question=question, answer="S1-S2",
                                is_screening=True, is_correct=False, answered_at=participant.created_at)
