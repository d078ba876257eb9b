"""The study's overview page in the admin (annotation/admin/overview.py, with the sections platforms and scoring
register): next steps in pipeline order with the next one highlighted, progress bars with the known counts, money
with places × reward, the fee, bonuses paid / owed / unknown, warnings that need a person, a bounded query count;
reached from the study list, the change page (instead of the raw "live progress" dict), a job and the dashboard;
and the admin home's pipeline and studies in progress."""
from __future__ import annotations

import re
from decimal import Decimal
from typing import Any

import pytest
from django.test import Client
from django.urls import reverse

from annotation.models import Study
from core.models import Job
from platforms.models import BonusPayment, Decision, PlatformAccount, PlatformStudy, PlatformSubmission
from scoring.models import ModelAnswer, ModelRun
from tests import factories as f
from tests.annotation.overview.test_selectors import known_study

pytestmark = pytest.mark.django_db


def _on_prolific(study: Study) -> PlatformStudy:
    account = PlatformAccount.objects.create(name="lab", platform="prolific")
    ps = PlatformStudy.objects.create(study=study, account=account, platform="prolific", currency="GBP",
                                      state=PlatformStudy.State.PUBLISHED, external_id="ext-1", places=10,
                                      reward_cents=150)
    for state, amount, worker in ((BonusPayment.State.PAID, "1.00", "w1"), (BonusPayment.State.PENDING, "0.50", "w2"),
                                  (BonusPayment.State.UNKNOWN, "0.25", "w3")):
        BonusPayment.objects.create(platform_study=ps, worker_id=worker, source="flat:x", amount=Decimal(amount),
                                    currency="GBP", state=state)
    return ps


def _text(html: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html))


def _overview(client: Client, study: Study) -> str:
    response = client.get(reverse("admin:annotation_study_overview", args=[study.pk]))
    assert response.status_code == 200
    return response.content.decode()


def test_the_overview_shows_steps_progress_money_and_warnings(admin_client: Client) -> None:
    study = known_study(completed_seconds=5.49)["study"]
    ps = _on_prolific(study)
    page = _overview(admin_client, study)
    steps = re.findall(r'<li data-step="(\w+)">', page)
    assert steps == ["preview", "open", "publish", "sync", "decisions", "bonuses", "agreement", "filter", "export",
                     "score"]
    # open and published, never synced: the next step is the sync, a POST to the platform page's door
    assert re.search(r'<li data-step="sync">\s*<form method="post" action="' + re.escape(
        reverse("admin:platforms_platformstudy_sync", args=[ps.pk])) + r'">.*?class="button next default"', page, re.S)
    assert page.count("next default") == 1
    text = _text(page)
    assert "Next: Sync submissions" in text
    assert "answers stored 7 of 12 (58 %)" in re.sub(r"\s+", " ", _text(page))
    assert "items at k 2 of 4 (50 %)" in text
    for row in ("participants arrived 5 ", "participants consented 4 of 5", "participants finished a session 2 of 5",
                "participants excluded 1 of 5", "participants screened out 1 of 5",
                "participants who returned or timed out 0 of 5"):
        assert row in text, row
    assert "places × reward 10 × 1.50 = 15.00 GBP" in text
    assert "platform fee (estimate) 5.58 GBP (33.3 % of rewards and bonuses)" in text  # 16.75 × 0.3333
    assert "bonuses paid 1.00 GBP" in text and "bonuses owed, not paid yet 0.50 GBP" in text
    assert "bonuses outcome unknown 0.25 GBP ⚠ check on the platform" in text
    assert "is implausible" in text and "⚠ implausible" in text
    assert "1 bonus payment with an unknown outcome" in text
    ledger = reverse("admin:platforms_bonuspayment_changelist")
    assert f'href="{ledger}?state__exact=unknown&amp;platform_study__id__exact={ps.pk}"' in page
    assert admin_client.get(f"{ledger}?state__exact=unknown&platform_study__id__exact={ps.pk}").status_code == 200
    assert '<svg class="overview-arrivals" role="img"' in page and "5 arrivals from" in page


def test_an_unknown_decision_and_an_order_dependent_model_run_are_warnings(admin_client: Client) -> None:
    info = known_study()
    study = info["study"]
    ps = _on_prolific(study)
    submission = PlatformSubmission.objects.create(platform_study=ps, external_id="s1", worker_id="w1",
                                                   status="AWAITING REVIEW")
    Decision.objects.create(platform_study=ps, submission=submission, worker_id="w1", kind="approve", state="unknown")
    run = ModelRun.objects.create(study=study, label="first-picker", backend="openai", model="m",
                                  summary={"order_sensitive_share": 1.0})
    ModelRun.objects.filter(pk=run.pk).update(computed_at=run.created_at)
    for item in info["items"]:
        ModelAnswer.objects.create(run=run, study_item=item, order="s12", answer="S1-S2", option_index=0,
                                   status="answered", cache_key="x")
    text = _text(_overview(admin_client, study))
    assert "1 decision with an unknown outcome" in text
    assert ("Model run “first-picker” picks the first option in 100% of its answers and answers differently across "
            "display orders on 100% of items: its answers depend on the order of the options (position bias)") in text


def test_the_query_count_is_bounded(admin_client: Client, django_assert_max_num_queries: Any) -> None:
    small = known_study()["study"]
    _on_prolific(small)
    with django_assert_max_num_queries(22) as small_queries:
        _overview(admin_client, small)
    big = known_study()["study"]
    for i in range(25):
        f.ResponseFactory(study_item=f.StudyItemFactory(study=big),
                          participant=f.ParticipantFactory(study=big, external_id=f"more{i}"))
    with django_assert_max_num_queries(len(small_queries)):
        _overview(admin_client, big)


def test_a_draft_with_no_platform_is_told_to_preview_then_open(admin_client: Client) -> None:
    study = f.StudyFactory(status=Study.Status.DRAFT)
    f.StudyItemFactory(study=study)
    page = _overview(admin_client, study)
    assert re.search(r'<li data-step="preview">\s*<a class="button next default" href="' +
                     re.escape(reverse("admin:annotation_study_preview", args=[study.pk])), page)
    text = _text(page)
    assert "No participant has arrived yet." in text and "Decisions (after publishing)" in text


def test_the_overview_is_reached_from_the_list_the_change_page_a_job_and_the_dashboard(admin_client: Client) -> None:
    study = known_study()["study"]
    url = reverse("admin:annotation_study_overview", args=[study.pk])
    assert f'href="{url}"' in admin_client.get(reverse("admin:annotation_study_changelist")).content.decode()
    change = admin_client.get(reverse("admin:annotation_study_change", args=[study.pk])).content.decode()
    assert f'href="{url}"' in change and "{'platform'" not in change and "participation" not in _text(change)
    job = Job.objects.create(kind="agreement_compute", params={"study": study.slug}, status=Job.Status.DONE)
    assert f'href="{url}"' in admin_client.get(reverse("admin:core_job_change", args=[job.pk])).content.decode()
    run = f.AgreementRunFactory(study=study)
    dashboard = admin_client.get(reverse("admin:scoring_agreement_dashboard", args=[run.pk])).content.decode()
    assert f'href="{url}"' in dashboard


def test_the_admin_home_starts_with_the_pipeline_and_the_studies_in_progress(admin_client: Client) -> None:
    active = known_study()["study"]
    f.StudyFactory(status=Study.Status.CLOSED, slug="closed-one")
    page = admin_client.get(reverse("admin:index")).content.decode()
    labels = re.findall(r'<li data-step="(\w+)">', page)
    assert labels == ["import", "generate", "study", "run", "analyse", "export"]
    for name in ("admin:tasks_corpus_import", "admin:annotation_study_create", "admin:scoring_agreement_start",
                 "admin:scoring_benchmarkexport_start"):
        assert f'href="{reverse(name)}"' in page
    in_progress = page[page.index('id="studies-in-progress"'):]
    assert f'href="{reverse("admin:annotation_study_overview", args=[active.pk])}"' in in_progress
    assert '<progress max="12" value="7"' in in_progress and "7 of 12" in in_progress
    assert "closed-one" not in in_progress
    assert page.index('id="sc-home"') < page.index('id="content-main"') or page.index('id="sc-home"') < page.index(
        "Annotation studies")


def test_a_prolific_study_is_told_to_publish_until_people_come_by_its_links(admin_client: Client) -> None:
    study = f.StudyFactory(status=Study.Status.ACTIVE, platform="prolific", allow_anonymous=False)
    f.StudyItemFactory(study=study)
    assert re.search(r'<li data-step="publish">\s*<a class="button next default"', _overview(admin_client, study))
    f.ParticipantFactory(study=study)  # the link was pasted into Prolific by hand: publishing here is optional
    page = _overview(admin_client, study)
    assert not re.search(r'<li data-step="publish">\s*<a class="button next default"', page)
    assert re.search(r'<li data-step="agreement">\s*<a class="button next default"', page)
