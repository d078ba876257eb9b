"""annotation.services.session_creation: arrival starts a batch, a returning client with its token resumes it,
a participant id alone never hands out the token, and unknown studies or platforms are refused."""
from __future__ import annotations

import pytest

from annotation.models import Batch, Participant
from annotation.services.session_creation import session_create
from core.errors import ApplicationError
from tests.annotation.helpers import make_study

pytestmark = pytest.mark.django_db


def test_arrival_starts_a_batch_and_the_same_client_resumes_it():
    study = make_study(n_instances=2, per_batch=2, k=1)
    first = session_create(slug=study.slug, participant_id="C1", platform="prolific")
    assert first.created and first.batch.state == Batch.State.CONSENT
    again = session_create(slug=study.slug, participant_id="C1", platform="prolific", proofs=(first.batch.token,))
    assert not again.created and again.batch.pk == first.batch.pk
    assert Participant.objects.filter(study=study, external_id="C1").count() == 1


def test_a_participant_id_alone_does_not_resume_someone_elses_session():
    study = make_study(n_instances=2, per_batch=2, k=1)
    first = session_create(slug=study.slug, participant_id="C2", platform="prolific")
    with pytest.raises(ApplicationError):
        session_create(slug=study.slug, participant_id="C2", platform="prolific")
    assert Batch.objects.filter(participant__external_id="C2").count() == 1
    assert Batch.objects.get(participant__external_id="C2").token == first.batch.token


def test_an_anonymous_link_gets_a_generated_id():
    study = make_study(n_instances=1, per_batch=1, k=1)
    result = session_create(slug=study.slug, platform="anonymous")
    assert result.batch.participant.external_id.startswith("anon-")


@pytest.mark.parametrize(("slug", "platform"), [("no-such-study", "prolific"), ("s1", "telegram")])
def test_an_unknown_study_or_platform_is_refused(slug, platform):
    make_study(n_instances=1, per_batch=1, k=1)
    with pytest.raises(ApplicationError):
        session_create(slug=slug, participant_id="C3", platform=platform)
    assert not Participant.objects.filter(external_id="C3").exists()
