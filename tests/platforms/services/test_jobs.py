"""platform_job_start: checks what it can before queueing (the kind, the study)."""
from __future__ import annotations

import pytest

from core.errors import ApplicationError
from core.models import Job
from platforms.services.jobs import platform_job_start

pytestmark = pytest.mark.django_db


def test_an_unknown_kind_or_study_is_refused_and_nothing_is_queued():
    with pytest.raises(ApplicationError, match="kind"):
        platform_job_start(kind="platform_nothing", study_slug="s", params={})
    with pytest.raises(ApplicationError):
        platform_job_start(kind="platform_sync", study_slug="no-such-study", params={})
    assert not Job.objects.exists()


# --- a money job whose call's outcome is unknown ends "attention", linked to where a person resolves it -------------

def test_a_dropped_pay_call_leaves_its_job_in_attention_linked_to_the_ledger(prolific_account, fake_prolific,
                                                                            admin_client, api) -> None:
    from django.urls import reverse

    from platforms.celery_tasks import platform_job_task
    from platforms.models import BonusPayment
    from tests.platforms.services.test_bonuses import PAY, _study

    ps = _study(prolific_account, fake_prolific)
    fake_prolific.fail("POST", PAY, "reset_after")  # Prolific pays; the connection drops before its answer
    job = platform_job_start(kind="platform_bonus", study_slug=ps.study.slug,
                             params={"apply": True, "flat": "1.00"})
    platform_job_task(job.pk)  # what the worker runs
    job.refresh_from_db()
    assert job.error == ""
    assert set(BonusPayment.objects.values_list("state", flat=True)) == {BonusPayment.State.UNKNOWN}
    assert job.status == Job.Status.ATTENTION and job.finished  # not "done": the money's outcome is unknown
    ledger = (reverse("admin:platforms_bonuspayment_changelist")
              + f"?state__exact=unknown&platform_study__id__exact={ps.pk}")

    body = api.get(f"/api/v1/jobs/{job.pk}/").json()
    assert body["status"] == "attention" and body["next_step"] is None
    assert body["attention"]["url"] == ledger and "3 bonus row(s)" in body["attention"]["reason"]
    assert "Check on Prolific whether it was paid" in body["attention"]["reason"]

    page = admin_client.get(reverse("admin:core_job_change", args=[job.pk])).content.decode()
    assert "needs attention" in page and 'class="job-attention"' in page
    assert f'href="{ledger.replace("&", "&amp;")}"' in page and "Resolve in the bonus ledger" in page
    ledger_page = admin_client.get(ledger).content.decode()
    assert ledger_page.count("outcome unknown: check on the platform") >= 3
    listing = admin_client.get(reverse("admin:core_job_changelist")).content.decode()
    assert '<strong class="job-attention">needs attention</strong>' in listing

    platform_job_task(job.pk)  # a redelivered message finds it finished: nothing is sent again
    assert len(fake_prolific.calls_to("POST", PAY)) == 1


def test_a_paid_bonus_job_is_done_and_a_dry_run_never_needs_attention(prolific_account, fake_prolific) -> None:
    from platforms.celery_tasks import platform_job_task
    from tests.platforms.services.test_bonuses import _study

    ps = _study(prolific_account, fake_prolific)
    dry = platform_job_start(kind="platform_bonus", study_slug=ps.study.slug, params={"flat": "1"})
    paid = platform_job_start(kind="platform_bonus", study_slug=ps.study.slug,
                              params={"apply": True, "flat": "1.00"})
    for job in (dry, paid):
        platform_job_task(job.pk)
        job.refresh_from_db()
        assert job.status == Job.Status.DONE and "attention" not in job.result


def test_a_decision_or_message_job_with_an_unknown_outcome_links_its_own_ledger(prolific_account,
                                                                               fake_prolific) -> None:
    from platforms.admin.ledger import _attention_link
    from platforms.services.jobs import job_attention_for
    from tests.platforms.services.test_bonuses import _study

    ps = _study(prolific_account, fake_prolific)
    decided = job_attention_for(kind="platform_decide", platform_study=ps, result={"dry_run": False, "unknown": 2})
    assert decided["reason"].startswith(f"2 decision(s) of study {ps.study.slug} have an unknown outcome")
    assert _attention_link(decided) == (
        f"/admin/platforms/decision/?state__exact=unknown&platform_study__id__exact={ps.pk}",
        "Resolve in the decisions")
    messaged = job_attention_for(kind="platform_message", platform_study=ps, result={"dry_run": False, "unknown": 5})
    assert _attention_link(messaged) == ("/admin/platforms/platformmessage/?state__exact=unknown",
                                         "See the messages whose outcome is unknown")
    assert job_attention_for(kind="platform_decide", platform_study=ps, result={"dry_run": True, "unknown": 2}) is None
    assert job_attention_for(kind="platform_sync", platform_study=ps, result={"dry_run": False, "unknown": 2}) is None
