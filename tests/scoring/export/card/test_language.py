"""The card states the language of the data (the corpora's and the studies') and of the participants (the study's
language, and the Prolific language filter its draft sent); Croissant carries `inLanguage`, validated by mlcroissant."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from platforms.models import PlatformAccount, PlatformStudy
from tasks.models import Corpus
from tests.factories import StudyFactory, annotated_study
from tests.scoring.export.test_hub import croissant_records
from tests.scoring.export.test_services import run_command

pytestmark = pytest.mark.django_db
FILTER = {"filter_id": "first-language", "selected_values": ["2"]}


def french_study(*, recruited: bool):  # noqa: ANN201
    study, items = annotated_study(answers=[["S2-S1"] * 3, ["S1-S2"] * 3], study=StudyFactory(language="fr-FR"))
    Corpus.objects.filter(pk=items[0].instance.corpus_id).update(language="fr")
    if recruited:
        account = PlatformAccount.objects.create(name="lab", platform="prolific")
        PlatformStudy.objects.create(study=study, account=account, recruitment_language={
            "language": "fr-FR", "language_name": "French", "kind": "first", "filter": FILTER,
            "note": 'Language: participants whose first language is French (Prolific filter "First language").'})
    return study


def test_the_card_states_the_data_s_and_the_participants_language(tmp_path: Path) -> None:
    study = french_study(recruited=True)
    run_command("export_benchmark", "--format", "jsonl", "--study", study.slug, "--out", str(tmp_path / "b.jsonl"))
    card = json.loads((tmp_path / "b.card.json").read_text())["language"]
    assert {d["tag"] for d in card["data"]} == {"fr", "fr-FR"} and card["data"][0]["name"] == "French"
    [people] = card["participants"]
    assert people["study_language"] == {"tag": "fr-FR", "name": "French"}
    assert people["platform"] == "prolific" and people["platform_filter"] == FILTER
    markdown = (tmp_path / "b.card.md").read_text()
    assert "## Language of the data and of the participants" in markdown
    assert "Language of the data: French (`fr`), French (`fr-FR`)." in markdown
    assert "first language is French" in markdown and "`first-language` = 2" in markdown


def test_a_study_recruited_without_a_platform_draft_says_no_filter_was_recorded(tmp_path: Path) -> None:
    study = french_study(recruited=False)
    run_command("export_benchmark", "--format", "jsonl", "--study", study.slug, "--out", str(tmp_path / "b.jsonl"))
    [people] = json.loads((tmp_path / "b.card.json").read_text())["language"]["participants"]
    assert people["platform_filter"] is None and "no language filter recorded" in people["recruitment"]


@pytest.mark.slow  # mlcroissant: seconds
def test_croissant_carries_in_language_and_validates(tmp_path: Path) -> None:
    study = french_study(recruited=True)
    run_command("export_benchmark", "--format", "hub", "--study", study.slug, "--out", str(tmp_path / "hub"))
    croissant_records(tmp_path / "hub" / "croissant.json")  # mlcroissant validates it, then reads every record set
    croissant = json.loads((tmp_path / "hub" / "croissant.json").read_text())
    assert croissant["inLanguage"] == ["fr", "fr-FR"]
