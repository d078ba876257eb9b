"""A study's `uncertainty_model` setting (auto / one_coin / item_difficulty) through every door — create_study, the
admin's "Create a study" form, the API — and in what the study's export says: the model its p_correct comes from and
why (the researcher's setting, or auto's overdispersion test)."""
from __future__ import annotations

import datetime as dt
import io
import json
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.urls import reverse

from annotation.models import Participant, Response, Study
from scoring.agreement.uncertainty import MODEL_ANNOTATORS, MODEL_DIFFICULTY, study_uncertainty, uncertainty_summary
from tests import factories as f
from tests.annotation.admin.test_study_setup import _form
from tests.scoring.export.test_services import run_command

pytestmark = pytest.mark.django_db


@pytest.fixture
def corpus():
    corpus = f.CorpusFactory(name="turk-sample")
    for _ in range(12):
        f.TaskInstanceFactory(corpus=corpus)
    return corpus


def test_create_study_takes_the_setting_and_refuses_an_unknown_model(corpus):
    call_command("create_study", "--slug", "cli", "--setup", "quadruple", "--corpus", "turk-sample", "--count", "3",
                 "--uncertainty-model", "item_difficulty", "--screening-per-batch", "0", stdout=io.StringIO())
    assert Study.objects.get(slug="cli").uncertainty_model == "item_difficulty"
    call_command("create_study", "--slug", "cli-default", "--setup", "quadruple", "--corpus", "turk-sample",
                 "--count", "3", "--screening-per-batch", "0", stdout=io.StringIO())
    assert Study.objects.get(slug="cli-default").uncertainty_model == "auto"
    with pytest.raises(CommandError, match="invalid choice"):  # argparse's choices
        call_command("create_study", "--slug", "bad", "--setup", "quadruple", "--corpus", "turk-sample",
                     "--uncertainty-model", "mace", stdout=io.StringIO(), stderr=io.StringIO())
    assert not Study.objects.filter(slug="bad").exists()


def test_the_admin_form_posts_the_setting_and_names_it_when_wrong(admin_client, corpus):
    response = admin_client.post(reverse("admin:annotation_study_create"), _form(uncertainty_model="one_coin"))
    assert response.status_code == 302
    assert Study.objects.get(slug="web").uncertainty_model == "one_coin"
    refused = admin_client.post(reverse("admin:annotation_study_create"),
                                _form(slug="web-2", uncertainty_model="mace"))
    assert refused.status_code == 200 and "uncertainty_model" in refused.context["form"].errors
    assert not Study.objects.filter(slug="web-2").exists()


def test_the_api_takes_the_setting_and_refuses_a_bad_value_naming_the_field(api, corpus):
    body = {k: v for k, v in _form(slug="api-study").items() if k != "target_hourly_pay"}
    created = api.post("/api/v1/studies/", {**body, "uncertainty_model": "item_difficulty"}, format="json")
    assert created.status_code == 201, created.content
    assert Study.objects.get(slug="api-study").uncertainty_model == "item_difficulty"
    bad = api.post("/api/v1/studies/", {**body, "slug": "api-bad", "uncertainty_model": "mace"}, format="json")
    assert bad.status_code == 400 and "uncertainty_model" in json.dumps(bad.json()["error"])
    stop = api.post("/api/v1/studies/", {**body, "slug": "api-stop", "posterior_stop": 0.99}, format="json")
    assert stop.status_code == 400 and "posterior_stop" in json.dumps(stop.json()["error"])  # needs adaptive
    assert not Study.objects.filter(slug__in=["api-bad", "api-stop"]).exists()


def _crowd_study(*, model: str, n_items: int = 16, k: int = 5, people: int = 11) -> Study:
    """A study of n_items instances, each answered k times by annotators taken in turn from a pool larger than k
    (people, not vote positions), mostly agreeing with the gold answer."""
    study = f.StudyFactory(slug=f"crowd-{model}", uncertainty_model=model, annotators_per_item=k, min_correct=3)
    corpus = f.CorpusFactory(component=f.component("formality"))
    pool = [f.ParticipantFactory(study=study, external_id=f"w{n}") for n in range(people)]
    base = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)
    for i in range(n_items):
        instance = f.TaskInstanceFactory(corpus=corpus, correct_order="S2-S1", family=f"fam-{i}")
        item = f.StudyItemFactory(study=study, instance=instance, kind=study.item_kind)
        for j in range(k):
            person: Participant = pool[(i * 3 + j) % people]
            answer = "S2-S1" if (i + j) % 6 else "S1-S2"
            Response.objects.create(study=study, participant=person, study_item=item, answer=answer,
                                    is_correct=answer == item.correct_answer,
                                    answered_at=base + dt.timedelta(seconds=i * 10 + j), seconds=5.0)
    return study


def test_study_uncertainty_follows_the_setting_and_says_why():
    forced = study_uncertainty(study=_crowd_study(model="item_difficulty"))
    assert forced.model == MODEL_DIFFICULTY
    assert forced.facts["model_choice"] == {"setting": "item_difficulty", "model": MODEL_DIFFICULTY,
                                            "reason": "the study's setting uncertainty_model = item_difficulty"}
    one_coin_study = _crowd_study(model="one_coin")
    one_coin = study_uncertainty(study=one_coin_study)
    assert one_coin.model == MODEL_ANNOTATORS and "overdispersion" not in one_coin.facts
    dashboard, _ = uncertainty_summary(study=one_coin_study)  # what an agreement run stores and its dashboard draws
    assert dashboard["model_choice"]["reason"] == "the study's setting uncertainty_model = one_coin"
    auto = study_uncertainty(study=_crowd_study(model="auto"))
    choice = auto.facts["model_choice"]
    assert choice["setting"] == "auto" and choice["reason"].startswith("auto: the overdispersion statistic")
    assert choice["overdispersion"] == auto.facts["overdispersion"]


def test_an_export_of_an_item_difficulty_study_uses_the_difficulty_model_and_says_so(tmp_path: Path):
    study = _crowd_study(model="item_difficulty")
    out = tmp_path / "bench.jsonl"
    run_command("export_benchmark", "--format", "jsonl", "--study", study.slug, "--out", str(out))
    records = [json.loads(line) for line in out.read_text().splitlines()]
    assert records and {r["uncertainty_model"] for r in records} == {MODEL_DIFFICULTY}
    card = json.loads((tmp_path / "bench.card.json").read_text())["uncertainty"]
    assert card["models"] == [MODEL_DIFFICULTY]
    assert card["model_choice"] == [{"study": study.slug, "setting": "item_difficulty", "model": MODEL_DIFFICULTY,
                                     "reason": "the study's setting uncertainty_model = item_difficulty"}]
    markdown = (tmp_path / "bench.card.md").read_text()
    assert "| crowd-item_difficulty | item_difficulty | " in markdown


def _change_form(study: Study, **changes):
    """The study's admin change form as its page posts it: every field at its stored value, but `changes`."""
    from django.forms.models import model_to_dict

    from annotation.admin.studies import StudyChangeForm

    data = {name: json.dumps(value) if isinstance(value, dict | list) else value
            for name, value in model_to_dict(study).items() if value is not None}
    data.update(changes)
    return StudyChangeForm(data=data, instance=study)


def test_the_admin_change_page_checks_the_settings_on_their_fields():
    study = f.StudyFactory(slug="edited", status=Study.Status.DRAFT, screening_per_batch=0)
    ok = _change_form(study, uncertainty_model="item_difficulty")
    assert ok.is_valid(), ok.errors
    refused = _change_form(study, posterior_stop=0.99)  # not adaptive
    assert not refused.is_valid() and "adaptive" in refused.errors["posterior_stop"][0]
    refused = _change_form(study, adaptive_stopping=True, posterior_stop=2.0)
    assert refused.errors["posterior_stop"] == ["Posterior stop must be at most 0.9999, not 2.0."]
    refused = _change_form(study, adaptive_stopping=True, posterior_stop=0.99, posterior_drop=0.995)
    assert "posterior_drop" in refused.errors
    assert "uncertainty_model" in _change_form(study, uncertainty_model="mace").errors
    assert _change_form(study, adaptive_stopping=True, posterior_stop=0.99, posterior_drop=0.2).is_valid()
