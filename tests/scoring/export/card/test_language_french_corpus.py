"""A French corpus written for the project (`fixtures/corpora/formality_fr_*.txt`) end to end: imported with
`--language fr`, quadruples generated, a study created (French from its corpus, so French screening questions),
filled by simulated participants over HTTP, agreement computed, filtered, exported; the card states French as the
data's and the participants' language and Croissant's `inLanguage` carries `fr` (validated by mlcroissant)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from django.conf import settings
from django.core.management import call_command

from annotation.models import Response, Study
from tasks.models import Corpus, ScreeningQuestion, TaskInstance
from tests.scoring.agreement.test_dashboard_browser import ensure_components
from tests.scoring.export.test_hub import croissant_records
from tests.scoring.export.test_services import run_command

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]
CORPORA = Path(settings.BASE_DIR) / "fixtures" / "corpora"


def french_study_filled(live_server) -> Study:  # noqa: ANN001
    ensure_components()
    call_command("loaddata", "screening_questions", verbosity=0)
    run_command("import_corpus", "--name", "formality-fr", "--component", "formality", "--format", "aligned",
                "--language", "fr", "--licence", "GPL-3.0-or-later",
                str(CORPORA / "formality_fr_informal.txt"), str(CORPORA / "formality_fr_formal.txt"))
    corpus = Corpus.objects.get(name="formality-fr")
    assert corpus.language == "fr" and corpus.n_pairs == 30  # every pair passes STEL's pair test
    call_command("generate_instances", "--corpus", "formality-fr", "--setup", "quadruple", "--seed", "1", stdout=None)
    assert TaskInstance.objects.filter(corpus=corpus).count() >= 8
    call_command("generate_instances", "--corpus", "formality-fr", "--setup", "triple", "--seed", "1", stdout=None)
    assert TaskInstance.objects.filter(corpus=corpus, setup="triple").exists()  # as `make demo-data` makes both
    call_command("create_study", "--slug", "fr-crowd", "--setup", "quadruple", "--corpus", "formality-fr",
                 "--count", "8", "--seed", "1", "--annotators-per-item", "5", "--items-per-batch", "4",
                 "--screening-per-batch", "2", stdout=None)
    study = Study.objects.get(slug="fr-crowd")
    assert study.language == "fr"  # from the corpus
    summary = run_command("simulate_annotators", "--study", study.slug, "--participants", "16", "--accuracy", "0.9",
                          "--concurrency", "4", "--batches-each", "2", "--seed", "3",
                          "--base-url", live_server.url)
    assert summary["ok"] and summary["answers_stored"] > 0
    return study


def test_a_french_corpus_is_annotated_filtered_and_exported_in_french(live_server, tmp_path: Path) -> None:
    study = french_study_filled(live_server)
    # The screening questions served over HTTP were the project's French ones, never STEL's English ones.
    served = set(Response.objects.filter(study=study, is_screening=True)
                 .values_list("screening_question__name", "screening_question__language"))
    assert served and served <= {(q.name, "fr") for q in ScreeningQuestion.objects.filter(language="fr")}
    assert {name for name, _ in served} <= {"stylecrowd-fr-formality-1", "stylecrowd-fr-formality-2"}
    assert Response.objects.filter(study=study, is_screening=False, is_valid=True).count() == 8 * 5

    agreement = run_command("compute_agreement", "--study", study.slug, "--json")
    assert agreement["n_items"] == 8
    filtered = run_command("filter_instances", "--study", study.slug, "--min-correct", "3", "--seed", "1")
    assert (filtered["min_correct"], filtered["k"]) == (3, 5)
    assert filtered["validated"] >= 1 and filtered["validated"] + filtered["rejected"] == 8

    run_command("export_benchmark", "--format", "jsonl", "--status", "validated", "--study", study.slug,
                "--out", str(tmp_path / "b.jsonl"))
    assert len((tmp_path / "b.jsonl").read_text().splitlines()) == filtered["validated"]
    language = json.loads((tmp_path / "b.card.json").read_text())["language"]
    assert "fr" in {d["tag"] for d in language["data"]} and language["data"][0]["name"] == "French"
    [people] = language["participants"]
    assert people["study_language"] == {"tag": "fr", "name": "French"}
    assert "Language of the data: French (`fr`)" in (tmp_path / "b.card.md").read_text()

    run_command("export_benchmark", "--format", "hub", "--study", study.slug, "--out", str(tmp_path / "hub"))
    records = croissant_records(tmp_path / "hub" / "croissant.json")  # mlcroissant validates it, reads every set
    assert records
    croissant = json.loads((tmp_path / "hub" / "croissant.json").read_text())
    assert "fr" in croissant["inLanguage"]
