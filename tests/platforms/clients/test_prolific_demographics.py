"""The Prolific client's read of a submission's archived demographics, against the fake that validates every request
and answer against Prolific's API description: the snapshot, 404 when none is archived, a 5xx retried."""
from __future__ import annotations

import pytest

from platforms.clients.errors import UNKNOWN, PlatformCallError
from platforms.clients.prolific import ProlificClient
from tests.platforms.conftest import TOKEN


@pytest.fixture
def client(fake_prolific):  # noqa: ANN001, ANN201
    c = ProlificClient(token=TOKEN, base_url=fake_prolific.url, timeout=15.0, sleep=lambda _: None)
    yield c
    c.close()


def test_the_archived_snapshot_is_read_and_none_archived_is_none(client, fake_prolific) -> None:
    sub = fake_prolific.add_submission("c" * 24)
    fake_prolific.demographics[sub["id"]] = {"Age": "29", "Sex": "Male", "Ethnicity simplified": "DATA_EXPIRED"}
    assert client.submission_demographics(sub["id"]) == {"Age": "29", "Sex": "Male",
                                                         "Ethnicity simplified": "DATA_EXPIRED"}
    other = fake_prolific.add_submission("c" * 24)
    assert client.submission_demographics(other["id"]) is None
    assert [c.status for c in fake_prolific.calls_to("GET", r"/demographics/$")] == [200, 404]


def test_a_server_error_is_retried_and_a_lasting_one_is_an_unknown_outcome(client, fake_prolific) -> None:
    sub = fake_prolific.add_submission("c" * 24)
    fake_prolific.demographics[sub["id"]] = {"Age": "41"}
    fake_prolific.fail("GET", r"/demographics/", "500")
    assert client.submission_demographics(sub["id"]) == {"Age": "41"}
    fake_prolific.fail("GET", r"/demographics/", "500", times=10)
    with pytest.raises(PlatformCallError) as failed:
        client.submission_demographics(sub["id"])
    assert failed.value.outcome == UNKNOWN and failed.value.platform_status == 500
