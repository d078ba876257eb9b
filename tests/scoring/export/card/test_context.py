"""The datasheet card written from the database: who took part (through the participant API, on the server's clock),
what they saw verbatim, what they were paid (bonuses from the platform ledger where it exists), agreement per
component with intervals, the leak audit, versions with changelogs."""
from __future__ import annotations

import io
import json
from decimal import Decimal
from pathlib import Path

import pytest
from rest_framework.test import APIClient

from annotation.models import Participant as ParticipantRow
from scoring.export.card.costs import study_cost_facts
from scoring.export.versions import version_next
from scoring.models import BenchmarkExport
from tasks.models import Corpus
from tests.annotation.helpers import Participant, make_study
from tests.factories import TaskInstanceFactory
from tests.scoring.export.test_services import run_command

pytestmark = pytest.mark.django_db

CONSENT = "I agree to take part.\nMy answers are used for research only."
INSTRUCTIONS = "Pick the order that matches the anchors' styles.\n\n# Not a heading: kept verbatim"
NATIVE = {"name": "native", "text": "Is English your native language?", "choices": ["yes", "no"], "accept": ["yes"]}


@pytest.fixture
def collected_study():
    """A study played through the participant API: six finish, one is screened out by eligibility, one fails a
    screening question (excluded), one declines consent."""
    study = make_study(n_instances=9, slug="card-study", k=3, per_batch=4, screening=1, eligibility=[NATIVE],
                       consent_text=CONSENT, task_description=INSTRUCTIONS, m=2)
    screened = Participant(APIClient(), study.slug, "SCREENED")
    screened.start()
    screened.consent()
    screened.client.post(f"/api/v1/sessions/{screened.token}/eligibility/", {"answers": {"native": "no"}},
                         format="json")
    failing = Participant(APIClient(), study.slug, "FAILS")
    failing.start()
    failing.consent()
    failing.client.post(f"/api/v1/sessions/{failing.token}/eligibility/", {"answers": {"native": "yes"}},
                        format="json")
    failing.play(fail_screening=True)
    for index in range(6):
        person = Participant(APIClient(), study.slug, f"P{index}")
        person.start()
        person.consent()
        person.client.post(f"/api/v1/sessions/{person.token}/eligibility/", {"answers": {"native": "yes"}},
                           format="json")
        person.play(correct=index != 5)
    declining = Participant(APIClient(), study.slug, "DECLINES")
    declining.start()
    declining.client.post(f"/api/v1/sessions/{declining.token}/consent/", {"agree": False}, format="json")
    ParticipantRow.objects.filter(study=study, external_id__in=["P0", "P1", "P2", "P3", "P4"]).update(
        persona={"age": "25-34"})
    return study


def test_card_collection_instructions_pay_and_agreement(collected_study, tmp_path) -> None:
    study = collected_study
    run_command("filter_instances", "--study", study.slug, "--seed", "1")
    out = tmp_path / "bench.jsonl"
    run_command("export_benchmark", "--format", "jsonl", "--study", study.slug, "--status", "all", "--out", str(out))
    card = json.loads((tmp_path / "bench.card.json").read_text())
    facts = card["collection"]["studies"][0]
    people = facts["participants"]
    assert people["arrived"] == 9 and people["consented"] == 8 and people["declined_consent"] == 1
    assert people["completed_a_batch"] == 7 and people["screened_out"] == {"eligibility": 1}
    assert people["excluded"] == {"failed a screening question": 1}
    assert facts["median_seconds_per_item"] is not None and facts["median_seconds_per_item"] >= 0
    assert facts["design"]["annotators_per_item"] == 3 and facts["screening"]["questions_used"]
    assert facts["pay"]["currency"] == "GBP" and facts["pay"]["median_effective_hourly_pay"] is not None
    assert facts["pay"]["bonuses"] is None  # no platform ledger in this installation
    assert facts["demographics"] == {"age": {"25-34": 5}}  # one cell of 5: shown; smaller cells are pooled
    assert card["collection"]["filter"]["rule"].startswith("validated when at least 2 of the first 3")

    seen = card["instructions"]["studies"][0]
    assert seen["consent_text"] == CONSENT and seen["task_description"] == INSTRUCTIONS
    assert seen["eligibility_questions"] == [NATIVE]
    agreement = card["agreement"]
    assert agreement["source"].startswith("filter run #") and "formality" in agreement["components"]
    assert set(agreement["components"]["formality"]) >= {"fleiss_kappa", "fleiss_kappa_ci", "krippendorff_alpha_ci"}
    assert set(card["leak_audit"]) == {"formality"} and "passed" in card["leak_audit"]["formality"]
    assert card["files"][0]["path"] == "bench.jsonl" and len(card["files"][0]["sha256"]) == 64

    markdown = (tmp_path / "bench.card.md").read_text()
    assert "> I agree to take part.\n> My answers are used for research only." in markdown  # verbatim, every line
    assert "> # Not a heading: kept verbatim" in markdown
    assert "9 arrived, 8 consented" in markdown and "median effective" in markdown
    for title in ("Motivation", "Composition", "Collection", "Instructions", "Agreement", "Leak audit",
                  "Preprocessing", "Known limitations", "Licences and attribution", "Files", "Versions"):
        assert f"\n## {title}" in markdown


def test_bonus_totals_come_from_the_platform_ledger(collected_study, tmp_path) -> None:
    """The card's cost section reads the study's bonus ledger (platforms app): paid, owed and unknown amounts."""
    from platforms.models import BonusPayment, PlatformAccount, PlatformStudy

    account = PlatformAccount.objects.create(name="lab", platform="prolific", token_env="UNUSED")
    ps = PlatformStudy.objects.create(study=collected_study, account=account, platform="prolific", currency="GBP")
    for worker, amount, state in (("P0", "5.00", "paid"), ("P1", "7.50", "paid"), ("P2", "2.00", "pending"),
                                  ("P3", "1.00", "unknown")):
        BonusPayment.objects.create(platform_study=ps, worker_id=worker, source="flat:x", amount=Decimal(amount),
                                    currency="GBP", state=state)
    facts = study_cost_facts(collected_study)
    assert facts["bonuses"]["paid"] == "12.50" and facts["bonuses"]["pending"] == "2.00"
    assert facts["bonuses"]["unknown"] == "1.00" and facts["bonuses"]["participants"] == 2
    assert facts["bonuses"]["median_per_participant"] == "6.25"
    out = tmp_path / "bench.jsonl"
    run_command("export_benchmark", "--format", "jsonl", "--study", collected_study.slug, "--status", "all",
                "--out", str(out))
    assert "paid 12.50, pending 2.00, outcome unknown 1.00" in (tmp_path / "bench.card.md").read_text()


def test_versions_and_changelog_across_exports(tmp_path) -> None:
    instances = TaskInstanceFactory.create_batch(4)
    corpus = instances[0].corpus.name
    first = run_command("export_benchmark", "--format", "jsonl", "--corpus", corpus, "--name", "bench",
                        "--out", str(tmp_path / "v1.jsonl"))
    assert first["version"] == "1.0.0" and first["change"] == "first version"
    same = run_command("export_benchmark", "--format", "parquet", "--corpus", corpus, "--name", "bench",
                       "--out", str(tmp_path / "v1.parquet"))
    assert same["version"] == "1.0.0" and same["change"].startswith("no change")  # another format, same content
    added = TaskInstanceFactory(corpus=instances[0].corpus)
    second = run_command("export_benchmark", "--format", "jsonl", "--corpus", corpus, "--name", "bench",
                         "--out", str(tmp_path / "v2.jsonl"))
    assert second["version"] == "1.1.0" and "1 instance(s) added" in second["change"]
    instances[0].delete()
    added.correct_order = "S1-S2" if added.correct_order == "S2-S1" else "S2-S1"
    added.save()
    third = run_command("export_benchmark", "--format", "jsonl", "--corpus", corpus, "--name", "bench",
                        "--out", str(tmp_path / "v3.jsonl"))
    assert third["version"] == "2.0.0"
    card = json.loads((tmp_path / "v3.card.json").read_text())
    log = card["maintenance"]["changelog"]
    assert (log["added"], log["dropped"], log["relabelled"], log["previous_version"]) == (0, 1, 1, "1.1.0")
    assert log["examples"]["dropped"] == [f"{corpus}/{instances[0].stel_id}"]
    assert "Version **2.0.0**" in (tmp_path / "v3.card.md").read_text()
    # Only votes changed: a patch.
    export = BenchmarkExport.objects.get(version="2.0.0")
    votes_changed = {key: [label, 5] for key, (label, _) in export.manifest.items()}
    assert version_next(name="bench", manifest=votes_changed)[0] == "2.0.1"
    # Another name counts its own versions.
    other = run_command("export_benchmark", "--format", "jsonl", "--corpus", corpus, "--out", str(tmp_path / "o.jsonl"))
    assert other["name"] == f"{corpus}-all" and other["version"] == "1.0.0"


def test_bad_export_input_writes_nothing(tmp_path) -> None:
    from django.core.management import call_command
    from django.core.management.base import CommandError

    TaskInstanceFactory()
    for extra, message in [(["--status", "validated"], "no task instances match"),
                           (["--name", "bad name!"], "Name: 'bad name!'"),
                           (["--format", "hub", "--status", "validated"], "no task instances match")]:
        args = ["--format", "jsonl", *extra] if "--format" not in extra else extra
        with pytest.raises(CommandError, match=message):
            call_command("export_benchmark", *args, "--out", str(tmp_path / "out.x"), stdout=io.StringIO())
    assert not BenchmarkExport.objects.exists() and list(Path(tmp_path).iterdir()) == []


def test_stel_tsv_card_names_no_server_folder_and_says_k_for_the_votes_column(collected_study, tmp_path) -> None:
    """A k = 3 study's STEL TSV keeps STEL's header `# Votes out of 5 …` (its readers expect it), and the card says
    that the votes there are out of k = 3; neither card names the folder the server wrote the export to."""
    study = collected_study
    run_command("filter_instances", "--study", study.slug, "--seed", "1")
    # a corpus imported on the command line records the paths it was read from
    Corpus.objects.update(source=f"{tmp_path}/corpora/informal.txt; {tmp_path}/corpora/formal.txt")
    out = tmp_path / "exports" / "bench.tsv"
    out.parent.mkdir()
    run_command("export_benchmark", "--format", "stel-tsv", "--study", study.slug, "--status", "all", "--out", str(out))
    header = out.read_text(encoding="utf-8").splitlines()[0].split("\t")
    assert "# Votes out of 5 for Correct Alternative" in header
    card_json = (out.parent / "bench.card.json").read_text(encoding="utf-8")
    markdown = (out.parent / "bench.card.md").read_text(encoding="utf-8")
    for text in (card_json, markdown):
        assert str(tmp_path) not in text and str(out.parent) not in text
    card = json.loads(card_json)
    assert card["command"].endswith("--out bench.tsv")
    assert {source["source"] for source in card["sources"]} == {"informal.txt; formal.txt"}
    assert card["votes_column"] == {"column": "# Votes out of 5 for Correct Alternative", "out_of": [3],
                                    "note": card["votes_column"]["note"]}
    assert "out of k = 3" in card["votes_column"]["note"]
    reproduce = markdown.split("Reproduce:", 1)[1].split("```")[1]
    assert "--out bench.tsv" in reproduce and "/" not in reproduce
    assert "Votes (`# Votes out of 5 for Correct Alternative`): Votes out of k = 3" in markdown
    assert "kept for compatibility" in markdown


def test_the_card_quotes_each_consent_version_with_its_participants(collected_study, tmp_path) -> None:
    """Eight people agreed to the first text; after the researcher edits it, one more agrees to the second."""
    study = collected_study
    study.consent_text = "An edited text, after participants."
    study.save(update_fields=["consent_text"])
    late = Participant(APIClient(), study.slug, "LATE")
    late.start()
    late.consent()
    out = tmp_path / "bench.jsonl"
    run_command("export_benchmark", "--format", "jsonl", "--study", study.slug, "--status", "all", "--out", str(out))
    versions = json.loads((tmp_path / "bench.card.json").read_text())["instructions"]["studies"][0]["consent_versions"]
    assert [(v["participants"], v["text"].splitlines()[0]) for v in versions] == [
        (8, CONSENT.splitlines()[0]), (1, "An edited text, after participants.")]
    markdown = (tmp_path / "bench.card.md").read_text()
    assert "Consent (2 versions;" in markdown
    assert f"Consent version 1 (sha256 `{versions[0]['sha256'][:12]}`): agreed to by 8 participant(s)" in markdown
    assert f"Consent version 2 (sha256 `{versions[1]['sha256'][:12]}`): agreed to by 1 participant(s)" in markdown
    assert "> An edited text, after participants." in markdown and "> What we record, and for how long" in markdown
