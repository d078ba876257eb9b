"""scoring/erasures.py: agreement runs, filter runs and exports made before an erasure that touched their study say
"computed before n erasures" in the admin (list column and detail page) and the API (`erasures_since`, a note); the
dataset card states how many participants' data was erased on request."""
from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from django.core.management import call_command
from django.utils import timezone

from annotation.models import Participant
from core.erasure import participant_erase
from scoring.models import AgreementRun, BenchmarkExport, FilterRun
from tests.factories import AgreementRunFactory, StudyFactory, annotated_study

pytestmark = pytest.mark.django_db

RAW = "5f0c1e2d3b4a5968778a9b0e"


def run_command(*args: str) -> dict:
    out = io.StringIO()
    call_command(*args, stdout=out)
    return json.loads(out.getvalue().strip().splitlines()[-1])


@pytest.fixture
def made_before(tmp_path, settings):  # noqa: ANN001, ANN201
    """An agreement run, a filter run and an export of a study; then one of its participants is erased."""
    settings.MEDIA_ROOT = str(tmp_path / "media")
    study, _ = annotated_study(answers=[["S2-S1"] * 5, ["S1-S2"] * 5, ["S2-S1"] * 4 + ["S1-S2"]])
    Participant.objects.filter(study=study, external_id="p0").update(external_id=RAW)
    untouched = AgreementRunFactory(study=StudyFactory(), computed_at=timezone.now())
    agreement = AgreementRunFactory(study=study, computed_at=timezone.now(), result={"fleiss_kappa": 0.5})
    filtered = FilterRun.objects.get(pk=run_command("filter_instances", "--study", study.slug)["filter_run"])
    exported = BenchmarkExport.objects.get(pk=run_command(
        "export_benchmark", "--format", "jsonl", "--status", "validated", "--study", study.slug,
        "--out", str(tmp_path / "before.jsonl"))["export"])
    participant_erase(platform="prolific", external_id=RAW, apply=True)
    return {"study": study, "agreement": agreement, "filter": filtered, "export": exported, "untouched": untouched,
            "tmp": tmp_path}


def test_api_bodies_say_how_many_erasures_came_after(api, made_before):
    bodies = [api.get(f"/api/v1/agreement-runs/{made_before['agreement'].pk}/").json(),
              api.get(f"/api/v1/filter-runs/{made_before['filter'].pk}/").json(),
              api.get(f"/api/v1/exports/{made_before['export'].pk}/").json()]
    for body in bodies:
        assert body["erasures_since"] == 1, body
        assert body["erasures_note"].startswith("Computed before 1 erasure on request")
    fresh = api.get(f"/api/v1/agreement-runs/{made_before['untouched'].pk}/").json()
    assert (fresh["erasures_since"], fresh["erasures_note"]) == (0, "")


def test_a_run_made_after_the_erasure_counts_none(api, made_before):
    later = AgreementRunFactory(study=made_before["study"], computed_at=timezone.now())
    assert AgreementRun.objects.count() == 3
    assert api.get(f"/api/v1/agreement-runs/{later.pk}/").json()["erasures_since"] == 0


def test_admin_lists_and_pages_show_computed_before_n_erasures(admin_client, made_before):
    for url in ("/admin/scoring/agreementrun/", "/admin/scoring/filterrun/", "/admin/scoring/benchmarkexport/"):
        page = admin_client.get(url)
        assert page.status_code == 200 and b"computed before 1 erasure" in page.content, url
    dashboard = admin_client.get(f"/admin/scoring/agreementrun/{made_before['agreement'].pk}/dashboard/")
    assert b'id="agr-erasures"' in dashboard.content and b"Computed before 1 erasure" in dashboard.content
    filter_page = admin_client.get(f"/admin/scoring/filterrun/{made_before['filter'].pk}/change/")
    assert b"computed before 1 erasure" in filter_page.content
    export_page = admin_client.get(f"/admin/scoring/benchmarkexport/{made_before['export'].pk}/change/")
    assert b"computed before 1 erasure" in export_page.content and b"erasures-note" in export_page.content


def test_the_card_states_how_many_participants_were_erased(made_before):
    from scoring.export.formats import card_paths

    after_path = made_before["tmp"] / "after.jsonl"
    run_command("export_benchmark", "--format", "jsonl", "--status", "validated", "--study",
                made_before["study"].slug, "--out", str(after_path))
    before_json, before_md = card_paths(Path(made_before["export"].path), folder=False)
    after_json, after_md = card_paths(Path(BenchmarkExport.objects.latest("created_at").path), folder=False)
    assert "Erased on request: 0 participant(s)' data" in before_md.read_text()
    assert "Erased on request: 1 participant(s)' data (their answers are not in these files)" in after_md.read_text()
    assert '"erased_on_request": 1' in after_json.read_text()
