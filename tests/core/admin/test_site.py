"""The admin as a newcomer meets it: named StyleCrowd, its apps in the pipeline's order, JSON fields indented."""
from __future__ import annotations

import json
import re

import pytest
from django.urls import reverse

from tests import factories as f

pytestmark = pytest.mark.django_db


def test_the_admin_is_named_stylecrowd_and_lists_apps_in_pipeline_order(admin_client) -> None:
    page = admin_client.get(reverse("admin:index")).content.decode()
    assert "Django administration" not in page and "Django site admin" not in page
    assert "<title>StyleCrowd" in page or "| StyleCrowd</title>" in page
    assert re.search(r'<div id="site-name"><a href="/admin/">StyleCrowd</a>', page)
    titles = ["Corpora and task instances", "Annotation studies", "Crowd platforms",
              "Agreement, filtering, exports and model scoring", "Background jobs", "Authentication and Authorization"]
    positions = [page.index(f">{title}<") for title in titles]
    assert positions == sorted(positions), positions
    tasks = page[positions[0]:positions[1]]
    assert tasks.index(">Corpora<") < tasks.index(">Task instances<") < tasks.index(">Style components<")
    study_page = admin_client.get(reverse("admin:annotation_study_changelist")).content.decode()
    assert "Django administration" not in study_page and "StyleCrowd" in study_page


def test_json_fields_are_shown_indented(admin_client) -> None:
    study = f.StudyFactory(selection={"setup": "quadruple", "corpus": ["turk"], "count": 5},
                           eligibility_questions=[{"name": "native_english", "choices": ["yes", "no"]}])
    page = admin_client.get(reverse("admin:annotation_study_change", args=[study.pk])).content.decode()
    # read-only (selection): indented in a <pre>, not a one-line dict
    assert '<pre class="sc-json"' in page and "{<br>  &quot;" in page
    assert "<br>  &quot;setup&quot;: &quot;quadruple&quot;" in page
    assert "{'setup': 'quadruple'" not in page
    # editable (eligibility questions): the box holds indented JSON that reads back to the same value
    form = admin_client.get(reverse("admin:annotation_study_change", args=[study.pk])).context["adminform"].form
    shown = form["eligibility_questions"].value()
    text = form.fields["eligibility_questions"].prepare_value(json.loads(shown) if isinstance(shown, str) else shown)
    assert text.startswith('[\n  {\n    "name": "native_english"') and json.loads(text) == study.eligibility_questions


def test_every_app_registers_its_admins_on_the_one_stylecrowd_site() -> None:
    """The site's class lives in the core.admin package, which registers core's admins on import: set up in the wrong
    order, those registrations land on a second site that is dropped, and Job and the login attempts vanish."""
    from axes.models import AccessAttempt
    from django.contrib import admin

    from core.admin.login_attempts import LoginAttemptAdmin
    from core.admin.site import StyleCrowdAdminSite
    from core.models import Job
    from tasks.models import Corpus, NumberSubstitutionCandidate, ScreeningQuestion

    assert isinstance(admin.site._wrapped, StyleCrowdAdminSite)
    for model in (Job, AccessAttempt, Corpus, NumberSubstitutionCandidate, ScreeningQuestion):
        assert admin.site.is_registered(model), model
    assert isinstance(admin.site._registry[AccessAttempt], LoginAttemptAdmin)
