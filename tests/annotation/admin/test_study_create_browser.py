""""Create a study" by kind, driven in Chromium by a member of the researcher group: the kind chooser (a sentence
each), then one kind's fields only (another kind's field is not on the page), the study created through the form
itself for every kind, a bad value shown beside its field with nothing stored, and axe on every page."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import Group, User

from annotation.forms import STUDY_KINDS
from annotation.models import Study
from core.roles import roles_sync
from tests.annotation.accessibility import assert_accessible
from tests.annotation.conftest_browser import *  # noqa: F403
from tests.factories import CorpusFactory, TaskInstanceFactory

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.browser]

LIKERT = [{"id": f"l{n}", "source": f"gonna be late {n}", "rewrite": f"I will be late {n}.", "system": "s"}
          for n in range(3)]
RANKING = [{"id": f"r{n}", "source": f"u coming {n}?", "outputs": [{"id": "a", "text": f"Are you coming {n}?"},
                                                                    {"id": "b", "text": f"Will you come {n}?"}]}
           for n in range(2)]


def researcher_logs_in(page: Any, url: str) -> None:
    roles_sync()
    User.objects.create_user("researcher", "r@example.org", "pw-researcher-1", is_staff=True).groups.add(
        Group.objects.get(name="researcher"))
    page.goto(f"{url}/admin/login/")
    page.fill("#id_username", "researcher")
    page.fill("#id_password", "pw-researcher-1")
    page.click("input[type=submit]")
    page.wait_for_url(f"{url}/admin/")


def choose(page: Any, url: str, kind: str) -> None:
    page.goto(f"{url}/admin/annotation/study/add/")  # "Add study" leads to the chooser
    page.click(f"#kind-{kind}")
    page.wait_for_selector("#study-create")


def test_each_kind_is_created_through_its_own_form(page: Any, live_server: Any, tmp_path: Path) -> None:
    url = live_server.url
    corpus = CorpusFactory(name="turk-sample")
    for n in range(6):
        TaskInstanceFactory(corpus=corpus, family=f"q{n}")
        TaskInstanceFactory(corpus=corpus, family=f"t{n}", setup="triple", correct_order="S1-S2")
    researcher_logs_in(page, url)

    page.goto(f"{url}/admin/annotation/study/add/")
    chooser = page.inner_text("#study-kinds")
    for _, title, sentence in STUDY_KINDS:
        assert title in chooser and sentence in chooser
    assert_accessible(page, "the kind chooser")

    for setup in ("quadruple", "triple"):
        choose(page, url, setup)
        assert page.is_visible("#id_corpora") and page.is_visible("#id_screening_per_batch")
        assert page.query_selector("#id_sources") is None and page.query_selector("#id_items_file") is None
        assert page.query_selector("#id_setup") is None and page.query_selector("#id_kind") is None
        assert page.input_value("#id_items_per_batch") == "14"  # the declared default, shown
        assert_accessible(page, f"the {setup} form")
        page.fill("#id_slug", f"web-{setup}")
        page.select_option("#id_corpora", "turk-sample")
        page.fill("#id_count", "4")
        page.fill("#id_screening_per_batch", "0")
        page.click("#study-create input[type=submit]")
        page.wait_for_selector("#open-study")  # the draft's preview page
        study = Study.objects.get(slug=f"web-{setup}")
        assert (study.item_kind, study.status, study.items.count()) == (setup, Study.Status.DRAFT, 4)
        assert {i.instance.setup for i in study.items.select_related("instance")} == {setup}

    likert = tmp_path / "likert.jsonl"
    likert.write_text("\n".join(json.dumps(row) for row in LIKERT), encoding="utf-8")
    choose(page, url, "likert")
    assert page.is_visible("#id_questions") and page.query_selector("#id_corpora") is None
    assert page.query_selector("#id_screening_per_batch") is None and page.query_selector("#id_min_correct") is None
    assert_accessible(page, "the likert form")
    page.fill("#id_slug", "web-likert")
    page.set_input_files("#id_items_file", str(likert))
    page.select_option("#id_preset", "pauli")
    page.click("#study-create input[type=submit]")
    page.wait_for_selector("#open-study")
    study = Study.objects.get(slug="web-likert")
    assert (study.item_kind, study.items.count()) == ("likert", 3) and study.questions

    ranking = tmp_path / "ranking.jsonl"
    ranking.write_text("\n".join(json.dumps(row) for row in RANKING), encoding="utf-8")
    choose(page, url, "ranking")
    assert page.query_selector("#id_questions") is None and page.query_selector("#id_sources") is None
    assert_accessible(page, "the ranking form")
    page.fill("#id_slug", "web-ranking")
    page.set_input_files("#id_items_file", str(ranking))
    page.click("#study-create input[type=submit]")
    page.wait_for_selector("#open-study")
    assert Study.objects.get(slug="web-ranking").items.count() == 2

    choose(page, url, "rewrite")
    assert page.is_visible("#id_sources") and page.query_selector("#id_corpora") is None
    assert page.query_selector("#id_preset") is None and page.query_selector("#id_practice_file") is None
    assert_accessible(page, "the rewrite form")
    page.fill("#id_slug", "web-rewrite")
    page.fill("#id_sources", "gonna be late for the meeting today sorry\nu coming to the party tonight or not")
    page.fill("#id_target_style", "formal")
    page.click("#study-create input[type=submit]")
    page.wait_for_selector("#open-study")
    study = Study.objects.get(slug="web-rewrite")
    assert (study.item_kind, study.items.count(), study.rewrite_settings.target_style) == ("rewrite", 2, "formal")
    assert not page.js_errors


def test_a_bad_value_is_shown_beside_its_field_and_nothing_is_stored(page: Any, live_server: Any) -> None:
    url = live_server.url
    corpus = CorpusFactory(name="turk-sample")
    for n in range(4):
        TaskInstanceFactory(corpus=corpus, family=f"q{n}")
    researcher_logs_in(page, url)
    choose(page, url, "quadruple")
    page.fill("#id_slug", "bad")
    page.fill("#id_annotators_per_item", "3")
    page.fill("#id_min_correct", "9")
    page.click("#study-create input[type=submit]")
    page.wait_for_selector(".errorlist")
    row = page.inner_text("tr:has(#id_min_correct)")
    assert "Min correct must be between 1 and annotators per item (3), not 9." in row
    assert page.url.endswith("/admin/annotation/study/create/quadruple/")
    assert page.query_selector("#id_sources") is None  # still the quadruple form
    assert_accessible(page, "the quadruple form with an error")
    assert not Study.objects.exists()
