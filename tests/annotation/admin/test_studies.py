"""The study's admin page and the consent: which participants agreed to which consent version (counts and
pseudonyms, never a raw id), and an edit that adds a special-category question without the explicit-consent
statement is refused on the change form."""
from __future__ import annotations

import pytest
from django.urls import reverse
from rest_framework.test import APIClient

from annotation.models import Study
from core.pseudonyms import pseudonym
from tests.annotation.helpers import Participant, make_study

pytestmark = pytest.mark.django_db

FIRST, LATER = "AAAAAAAAAAAAAAAAAAAAAAAA", "BBBBBBBBBBBBBBBBBBBBBBBB"


def _agree(study: Study, pid: str) -> None:
    person = Participant(APIClient(), study.slug, pid)
    person.start()
    person.consent()


def test_the_change_page_lists_the_versions_and_who_agreed_to_each(admin_client):
    study = make_study(slug="versions", consent_text="The first text.")
    page = admin_client.get(reverse("admin:annotation_study_change", args=[study.pk])).content.decode()
    assert "Nobody has agreed yet" in page
    _agree(study, FIRST)
    Study.objects.filter(pk=study.pk).update(consent_text="The edited text.")
    _agree(study, LATER)
    page = admin_client.get(reverse("admin:annotation_study_change", args=[study.pk])).content.decode()
    start = page.index("<details><summary>sha256")  # the versions' field (the text box above holds the text)
    page = page[start:page.rindex("</details>") + len("</details>")]
    first_at, later_at = page.index("The first text."), page.index("The edited text.")
    assert first_at < later_at and page.count("1 participant(s), 1 session(s)") == 2
    first_pseudonym = pseudonym(platform="prolific", external_id=FIRST)
    later_pseudonym = pseudonym(platform="prolific", external_id=LATER)
    assert first_at < page.index(first_pseudonym) < later_at < page.index(later_pseudonym)
    assert FIRST not in page and LATER not in page


def test_adding_a_special_category_question_needs_the_statement_on_the_change_form(admin_client):
    study = make_study(slug="edit")
    url = reverse("admin:annotation_study_change", args=[study.pk])
    form = admin_client.get(url).context["adminform"].form
    data = {name: form[name].value() for name in form.fields if form[name].value() is not None}
    data["eligibility_questions"] = ('[{"name": "party", "text": "Which party?", "choices": ["a", "b"], '
                                     '"special_category": true}]')
    data["target_hourly_pay"] = "9.00"
    data["status"] = "draft"
    response = admin_client.post(url, data)
    assert response.status_code == 200 and "Special-category consent" in response.content.decode()
    study.refresh_from_db()
    assert study.eligibility_questions == []
    response = admin_client.post(url, {**data, "special_category_consent": "I agree to say how I voted."})
    assert response.status_code == 302, response.context["adminform"].form.errors
    study.refresh_from_db()
    assert study.eligibility_questions[0]["special_category"] is True
