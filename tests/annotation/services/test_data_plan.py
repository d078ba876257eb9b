"""The data-management-plan section (annotation.services.data_plan) is written from the study's facts: the same
statement participants read, the special-category statement where one is asked, retention, the personal-data
permission's holders and the consent versions with their counts."""
from __future__ import annotations

import pytest
from django.contrib.auth.models import Permission, User
from rest_framework.test import APIClient

from annotation.models import Study
from annotation.services.consent import consent_statement_parts
from annotation.services.data_plan import data_plan_markdown
from tests.annotation.helpers import Participant, make_study

pytestmark = pytest.mark.django_db

POLITICS = {"name": "party", "text": "Which party did you vote for?", "choices": ["a", "b"], "special_category": True}


def test_the_plan_quotes_what_the_consent_says_and_counts_the_versions(settings):
    settings.STYLECROWD_PRIVACY_CONTACT = "dpo@lab.example"
    study = make_study(slug="plan", eligibility=[POLITICS], special_category_consent="I agree to say how I voted.",
                       consent_text="First text.")
    Study.objects.filter(pk=study.pk).update(retention_days=90)
    study.refresh_from_db()
    holder = User.objects.create_user("dpo", password="pw", is_staff=True)
    holder.user_permissions.add(Permission.objects.get(codename="view_personal_data"))
    User.objects.create_user("plain", password="pw", is_staff=True)

    text, facts = data_plan_markdown(study=study)
    for _, sentence in consent_statement_parts(study=study):
        assert f"- {sentence}" in text
    assert "“Which party did you vote for?”" in text and "> I agree to say how I voted." in text
    assert "90 days after the study is closed" in text and "dpo@lab.example" in text
    assert "`core.view_personal_data`" in text and facts["accounts_with_personal_data_permission"] == 1
    assert "Nobody has agreed yet" in text and facts["consent_versions"] == []

    for pid in ("AAAAAAAAAAAAAAAAAAAAAAAA", "BBBBBBBBBBBBBBBBBBBBBBBB"):
        person = Participant(APIClient(), study.slug, pid)
        person.start()
        person.consent()
    text, facts = data_plan_markdown(study=study)
    assert [v["participants"] for v in facts["consent_versions"]] == [2]
    assert f"sha256 `{facts['consent_versions'][0]['sha256'][:12]}`: 2 participant(s)" in text
    assert "AAAAAAAAAAAAAAAAAAAAAAAA" not in text  # the plan names no participant
