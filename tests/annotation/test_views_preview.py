"""The researcher's preview (issue 23, point 3): the participant's own page in a preview mode that stores nothing,
for each platform the study accepts and only those, with both codes, and the study described in its kind's terms.

`accepted_platforms` is the one rule: the entry check refuses exactly the others, the links offered to the
researcher (admin and API) are exactly these, and so are the preview's tabs.
"""
from __future__ import annotations

import html
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.urls import reverse

from annotation.models import Batch, ItemKind, Participant, PracticeAnswer, Reservation, Response, Study
from annotation.services.participation import accepted_platforms, entry_check
from annotation.services.practice import practice_items_set
from annotation.services.rewrites import rewrite_study_create
from annotation.services.studies import study_create
from annotation.services.study_settings import study_settings_build
from core.errors import ApplicationError

# The browser fixtures (one Chromium per module, screenshots): imported, not a conftest.py.
from tests.annotation.accessibility import assert_accessible
from tests.annotation.conftest_browser import *  # noqa: F403
from tests.annotation.test_views_browser import (
    COMPLETED,
    NEXT_ITEM_OR_END,
    REDIRECT,
    SCREENED_OUT,
    on_screen,
    quadruple_study,
)
from tests.factories import CorpusFactory, StudyFactory, TaskInstanceFactory

PID = "5f1c0ffee0ddba11c0ffee01"
GOOD_LINKS = {  # platform → (participant, study_ref, session_ref, assignment, hit) that pass every check
    "prolific": (PID, "5f1c0ffee0ddba11c0ffee02", "SES1", "", ""),
    "mturk": ("A1B2C3D4E5F6", "", "", "ASSIGN0000001", "HIT00000001"),
    "anonymous": ("", "", "", "", ""),
}
PRACTICE = [{"anchor_1": "I'm on my way.", "anchor_2": "I am on my way.", "sentence_1": "It is late.",
             "sentence_2": "It's late.", "correct_answer": "S2-S1", "explanation": "The contractions go together."}]


def _refused(study: Study, platform: str) -> bool:
    participant, study_ref, session_ref, assignment, hit = GOOD_LINKS[platform]
    try:
        entry_check(study=study, platform=platform, participant_id=participant, study_ref=study_ref,
                    session_ref=session_ref, assignment=assignment, hit=hit)
    except ApplicationError as error:
        assert error.code == "invalid_link" and error.status == 400
        return True
    return False


@pytest.mark.django_db
@pytest.mark.parametrize(("platform", "anonymous", "expected"), [
    ("prolific", False, ["prolific"]), ("mturk", False, ["mturk"]),
    ("any", True, ["prolific", "mturk", "anonymous"]), ("any", False, ["prolific", "mturk"]),
])
def test_accepted_platforms_are_exactly_the_links_the_entry_check_lets_in(platform: str, anonymous: bool,
                                                                         expected: list[str]) -> None:
    study = StudyFactory(platform=platform, allow_anonymous=anonymous)
    assert accepted_platforms(study) == expected
    assert [p for p in GOOD_LINKS if not _refused(study, p)] == expected


@pytest.mark.django_db
def test_the_api_offers_only_the_links_a_prolific_study_accepts(api: Any) -> None:
    study = quadruple_study("prolific-only", platform="prolific", allow_anonymous=False)
    body = api.post(f"/api/v1/studies/{study.slug}/open/").json()
    assert set(body["links"]) == {"prolific"} and "{{%PROLIFIC_PID%}}" in body["links"]["prolific"]


@pytest.mark.django_db
def test_setup_page_of_a_prolific_study_shows_its_link_labelled_both_codes_and_no_other_platform(
    admin_client: Any,
) -> None:
    study = quadruple_study("setup-prolific", platform="prolific", allow_anonymous=False)
    page = html.unescape(admin_client.get(reverse("admin:annotation_study_preview", args=[study.pk])).content.decode())
    assert '<label for="link-prolific">' in page and 'id="link-prolific"' in page
    assert 'id="link-mturk"' not in page and 'id="link-anonymous"' not in page
    assert "/preview/mturk/" not in page and "/preview/anonymous/" not in page
    assert COMPLETED in page and SCREENED_OUT in page and "screened out" in page
    assert "k = 5 people answer each item" in page and "m = 3" in page
    assert "answer it within 5 minutes" in page  # the first-answer grace, as participants are told
    # The admin door to publishing (which sets both codes), not a command to run.
    assert "platform_publish" not in page and "manage.py" not in page
    assert f'id="publish-link"\nhref="{reverse("admin:platforms_platformstudy_publish", args=[study.pk])}"' in page
    for refused in ("mturk", "anonymous"):  # the participant preview of a refused platform does not exist
        url = reverse("admin:annotation_study_participant_preview", args=[study.pk, refused])
        assert admin_client.get(url).status_code == 404


@pytest.mark.django_db
def test_setup_page_of_a_rewrite_study_speaks_of_rewrites_not_m_of_k(admin_client: Any) -> None:
    study, _ = rewrite_study_create(
        slug="setup-rewrite", sources=[("s1", "gonna be late again for the meeting")], target_style="formal",
        eligibility_questions=[], filters={"min_words": 0},
        settings=study_settings_build(annotators_per_item=2, items_per_batch=1),
    )
    page = html.unescape(admin_client.get(reverse("admin:annotation_study_preview", args=[study.pk])).content.decode())
    assert "k = 2 rewrites per source text" in page and "m = " not in page
    likert = study_create(slug="setup-likert", item_kind=ItemKind.LIKERT, items=[
        {"id": "l1", "source": "gonna be late", "rewrite": "I will be late."}], eligibility_questions=[],
        questions=[{"name": "style", "text": "How formal is it?", "min": 1, "max": 5}])
    page = admin_client.get(reverse("admin:annotation_study_preview", args=[likert.pk])).content.decode()
    assert "Likert rating study" in page and "How formal is it?" in page and "m = " not in page


@pytest.mark.django_db
def test_participant_preview_is_the_participant_page_and_stores_nothing(admin_client: Any) -> None:
    study = quadruple_study("preview-page", platform="prolific", allow_anonymous=False)
    Study.objects.filter(pk=study.pk).update(status=Study.Status.DRAFT)  # a draft can be previewed
    response = admin_client.get(reverse("admin:annotation_study_participant_preview", args=[study.pk, "prolific"]))
    assert response.status_code == 200 and response.templates[0].name == "annotation/study.html"
    preview = response.context["config"]["preview"]
    assert preview["codes"] == {"completed": COMPLETED, "screened_out": SCREENED_OUT}
    assert preview["redirects"] == {"completed": REDIRECT.format(code=COMPLETED),
                                    "screened_out": REDIRECT.format(code=SCREENED_OUT)}
    assert len(preview["items"]) == 3 and preview["eligibility"][0]["accept"] == ["yes"]
    assert response["X-Frame-Options"] == "SAMEORIGIN"  # shown in the setup page's frame
    assert not (Participant.objects.exists() or Batch.objects.exists() or Reservation.objects.exists())


@pytest.mark.django_db
def test_participant_preview_needs_the_permission_to_view_studies(client: Any) -> None:
    study = quadruple_study("preview-perm")
    url = reverse("admin:annotation_study_participant_preview", args=[study.pk, "prolific"])
    User.objects.create_user("staff", password="pw-staff-12", is_staff=True)
    client.login(username="staff", password="pw-staff-12")
    assert client.get(url).status_code == 403


# --- in the browser ---------------------------------------------------------------------------------------


def _login(page: Any, live_server: Any, next_url: str) -> None:
    User.objects.create_superuser("researcher", password="pw-research-1")
    page.goto(f"{live_server.url}/admin/login/?next={next_url}")
    page.fill("#id_username", "researcher")
    page.fill("#id_password", "pw-research-1")
    page.click("input[type=submit]")


@pytest.mark.django_db(transaction=True)
def test_preview_of_a_prolific_study_plays_the_whole_page_and_sends_nothing(page: Any, live_server: Any,
                                                                             shots: Any) -> None:
    study = quadruple_study("preview-walk", platform="prolific", allow_anonymous=False)
    practice_items_set(study=study, items=PRACTICE)
    Study.objects.filter(pk=study.pk).update(status=Study.Status.DRAFT)
    setup = reverse("admin:annotation_study_preview", args=[study.pk])
    _login(page, live_server, setup)
    page.wait_for_selector("#participant-preview")
    frame = page.frame_locator("#participant-preview")
    frame.locator('body[data-screen="consent"]').wait_for()
    assert page.locator(".preview-tabs a[data-platform]").all_inner_texts() == ["Prolific"]
    assert page.input_value("#link-prolific").endswith("SESSION_ID={{%SESSION_ID%}}")
    assert page.locator("label[for=link-prolific]").is_visible()
    shots(page, "setup")
    # The admin's own breadcrumbs (links told apart by colour) are Django's: the one part left out.
    assert_accessible(page, "the setup page with the participant preview", exclude=(".breadcrumbs",))

    api_calls: list[str] = []
    page.on("request", lambda request: api_calls.append(request.url) if "/api/" in request.url else None)
    page.goto(f"{live_server.url}{reverse('admin:annotation_study_participant_preview', args=[study.pk, 'prolific'])}")
    on_screen(page, "consent")
    assert "nothing you do here is stored" in page.inner_text("#preview-banner")
    assert page.inner_text("#preview-completion-code") == COMPLETED
    assert page.inner_text("#preview-screened-out-code") == SCREENED_OUT
    assert_accessible(page, "the preview's consent")
    page.click("#consent-agree")
    on_screen(page, "eligibility")
    page.get_by_label("yes").check()
    page.click("#eligibility-form button[type=submit]")
    on_screen(page, "instructions")
    assert "answer it within 5 minutes" in page.inner_text("#instructions-timing")
    page.click("#instructions-start")
    on_screen(page, "practice")
    page.keyboard.press("1")
    page.keyboard.press("Enter")
    page.wait_for_selector("#practice-feedback:not([hidden])")
    assert page.inner_text("#practice-feedback").startswith("Not quite: S2 goes with A1 and S1 goes with A2.")
    page.click("#practice-continue")
    on_screen(page, "item")
    assert page.is_visible("#grace-note")
    for position in (1, 2, 3):
        assert page.inner_text("#progress-text") == f"Item {position} of 3"
        item_id = page.get_attribute("#item-body", "data-item-id")
        page.click('label[data-choice="S2-S1"]')
        page.click("#item-submit")
        page.wait_for_function(NEXT_ITEM_OR_END, arg=item_id)
    on_screen(page, "done")
    shots(page, "preview-done")
    assert page.inner_text("#done-code") == COMPLETED
    page.click("#done-redirect")  # says where it goes, does not go
    assert REDIRECT.format(code=COMPLETED) in page.inner_text("#preview-note")
    assert page.url.endswith("/preview/prolific/")

    # The screened-out path shows the other code.
    page.reload()
    on_screen(page, "consent")
    page.click("#consent-agree")
    on_screen(page, "eligibility")
    page.get_by_label("no").check()
    page.click("#eligibility-form button[type=submit]")
    on_screen(page, "end")
    assert page.inner_text("#end-code") == SCREENED_OUT
    assert_accessible(page, "the preview's screened-out ending")

    assert api_calls == []  # the preview never called the participant API
    assert not (Participant.objects.exists() or Batch.objects.exists() or Response.objects.exists()
                or PracticeAnswer.objects.exists())
    # nothing of the participant's (the admin keeps its own sidebar state there)
    assert not [key for key in page.evaluate("Object.keys(window.localStorage)") if key.startswith("stylecrowd")]
    assert page.js_errors == []


@pytest.mark.django_db(transaction=True)
def test_preview_of_an_mturk_rewrite_study_shows_the_rewrite_page_and_mturk_submit(page: Any, live_server: Any,
                                                                                  shots: Any) -> None:
    study, _ = rewrite_study_create(
        slug="preview-rewrite", sources=[("s1", "gonna be late again for the meeting")], target_style="formal",
        min_length=10, eligibility_questions=[], filters={"min_words": 0},
        settings=study_settings_build(
            annotators_per_item=2, items_per_batch=1, platform="mturk", allow_anonymous=False,
        ),
    )
    url = reverse("admin:annotation_study_participant_preview", args=[study.pk, "mturk"])
    _login(page, live_server, url)
    on_screen(page, "consent")
    assert "Amazon Mechanical Turk" in page.inner_text("#preview-banner")
    page.click("#consent-agree")
    on_screen(page, "instructions")
    page.click("#instructions-start")
    on_screen(page, "item")
    assert "formal" in page.inner_text("label[for=rewrite-text]")
    page.fill("#rewrite-text", "I am afraid I shall be late for the meeting again.")
    assert_accessible(page, "the preview's rewrite item")
    page.click("#item-submit")
    on_screen(page, "done")
    page.click("#mturk-submit button")  # MTurk's submit form is shown, and posts nothing from the preview
    assert "nothing is sent from the preview" in page.inner_text("#preview-note")
    assert page.url.endswith("/preview/mturk/")
    assert not Response.objects.exists() and not Participant.objects.exists()
    assert page.js_errors == []


@pytest.mark.django_db
@pytest.mark.parametrize("kind", [ItemKind.TRIPLE, ItemKind.LIKERT, ItemKind.RANKING, ItemKind.REWRITE])
def test_participant_preview_serves_each_kind_as_the_participant_api_would(admin_client: Any, kind: str) -> None:
    items = {
        ItemKind.LIKERT: [{"id": "l1", "source": "gonna be late", "rewrite": "I will be late.", "reference": "Late."}],
        ItemKind.RANKING: [{"id": "r1", "source": "gonna be late", "outputs": [{"id": "a", "text": "I will be late."},
                                                                              {"id": "b", "text": "Late, I am."}]}],
        ItemKind.REWRITE: [{"id": "w1", "source": "gonna be late", "target_style": "formal"}],
    }
    if kind == ItemKind.TRIPLE:
        corpus = CorpusFactory()
        TaskInstanceFactory(corpus=corpus, setup=kind, anchor_2="", anchor_2_style=None)
        study = study_create(
            slug="kind-triple", item_kind=kind, setup=kind, corpus=[corpus.name], eligibility_questions=[],
            settings=study_settings_build(items_per_batch=1, screening_per_batch=0),
        )
    else:
        questions = [{"name": "q", "text": "How good?", "min": 1, "max": 5}] if kind == ItemKind.LIKERT else None
        study = study_create(
            slug=f"kind-{kind}", item_kind=kind, items=items[kind], questions=questions, eligibility_questions=[],
            settings=study_settings_build(items_per_batch=1),
        )
    response = admin_client.get(reverse("admin:annotation_study_participant_preview", args=[study.pk, "anonymous"]))
    assert response.status_code == 200
    served = response.context["config"]["preview"]["items"]
    assert [item["kind"] for item in served] == [kind]
    assert not {"correct_answer", "system", "swapped"} & set(served[0])  # what the participant API hides, hidden
    assert response.context["config"]["preview"]["practice"] == []
