"""Number-substitution candidates: the finder on STEL's real sentences, the command, review and corpus building."""
from __future__ import annotations

import csv
import json
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db import IntegrityError, transaction
from hypothesis import given
from hypothesis import strategies as st

from core.errors import ApplicationError
from tasks.models import Corpus, NumberSubstitutionCandidate
from tasks.services.number_substitutions import (
    SEED_SUBSTITUTIONS,
    nsubs_candidates_load,
    nsubs_candidates_set_status,
    nsubs_corpus_build,
    nsubs_file_scan,
    nsubs_tokens_find,
)

Candidate = NumberSubstitutionCandidate


def run_command(*args: str) -> tuple[dict, list[str]]:
    out = StringIO()
    call_command("find_number_substitutions", *args, stdout=out, stderr=StringIO())
    lines = out.getvalue().strip().splitlines()
    return json.loads(lines[-1]), lines[:-1]


def failing_command(*args: str) -> tuple[CommandError, dict]:
    out = StringIO()
    with pytest.raises(CommandError) as info:
        call_command("find_number_substitutions", *args, stdout=out, stderr=StringIO())
    return info.value, json.loads(out.getvalue().strip().splitlines()[-1])


# --- finding -----------------------------------------------------------------------------------------


@pytest.mark.parametrize(("text", "token", "rule"), [
    ("<3 friends 4ever", "4ever", "seed"),
    ("if any1 has tips", "any1", "pattern"),
    ("would appreci8 it", "appreci8", "pattern"),
    ("hey d00d!", "d00d", "seed"),
    ("see u b4 noon", "b4", "seed"),
    ("you're such a h8r lol", "h8r", "pattern"),
    ("I am N0t a n00b.", "N0t", "pattern"),
    ("this is c00l.", "c00l", "seed"),
    ("so n!ce", "n!ce", "seed"),
    ("pure 1337 skills", "1337", "seed"),
])
def test_substitutions_are_found(text: str, token: str, rule: str) -> None:
    found = {m.token: m.rule for m in nsubs_tokens_find(text=text)}
    assert found.get(token) == rule


@pytest.mark.parametrize("text", [
    "I was born in the 1990s and loved the 80s.",
    "She came 2nd and he came 3rd in the 100m race.",
    "My mp3 player and PS4 are broken.",
    "It takes 10mins, be there at 5pm.",
    "I've been 400-600 mmr for 12 years <3",
    "The 3D film runs at 24fps on x86 with an i7.",
    "Call user42 about the catch22.",
    "Wow, that is great!!! Really!",
])
def test_ordinary_numbers_and_names_are_not_substitutions(text: str) -> None:
    assert nsubs_tokens_find(text=text) == []


@given(st.text(alphabet=st.characters(blacklist_categories=["Nd", "Cs"], blacklist_characters="!"), max_size=200))
def test_text_without_digits_or_bangs_has_no_candidates(text: str) -> None:
    assert nsubs_tokens_find(text=text) == []


@given(
    words=st.lists(st.sampled_from(["the", "friends", "are", "here", "lol", "ok", "Soon", "2", "12", "<3"]),
                   max_size=8),
    seed=st.sampled_from(sorted(SEED_SUBSTITUTIONS)),
    position=st.integers(min_value=0, max_value=8),
    edge=st.sampled_from(["", ".", "!", "?", ",", "!!!"]),
)
def test_seed_words_are_found_anywhere(words: list[str], seed: str, position: int, edge: str) -> None:
    words.insert(min(position, len(words)), seed + edge)
    found = nsubs_tokens_find(text=" ".join(words))
    assert any(m.token == seed and m.rule == "seed" and m.suggestion == SEED_SUBSTITUTIONS[seed] for m in found)


def test_suggestions_help_the_reviewer() -> None:
    suggestions = {m.token: m.suggestion for m in nsubs_tokens_find(text="any1 appreci8 d00d 2day gr8 l0l")}
    assert suggestions == {"any1": "anyone", "appreci8": "appreciate", "d00d": "dude", "2day": "today",
                           "gr8": "great", "l0l": "lol"}


def test_recall_on_stels_substituted_sentences(shared_data: Path) -> None:
    """Every one of STEL's 100 real sentences with number substitutions is found."""
    scan = nsubs_file_scan(path=shared_data / "stel" / "nsubs_sentences.txt")
    assert scan.n_lines == 100
    assert [c.line_number for c in scan.candidates] == list(range(1, 101))  # recall 100 / 100


def test_few_hits_on_the_translations(shared_data: Path) -> None:
    """The translations have no substitutions left; the finder flags only 5 lines (game names such as 'ti3')."""
    scan = nsubs_file_scan(path=shared_data / "stel" / "nsubs_translated_sentences.txt")
    assert scan.n_lines == 100
    assert len(scan.candidates) == 5
    assert sorted(m.token for c in scan.candidates for m in c.matches) == ["1vs3", "FO3", "Lolz1", "NOW!THIS", "ti3"]


def test_found_tokens_are_the_ones_the_translators_changed(shared_data: Path) -> None:
    originals = (shared_data / "stel" / "nsubs_sentences.txt").read_text(encoding="utf-8").splitlines()
    translations = (shared_data / "stel" / "nsubs_translated_sentences.txt").read_text(encoding="utf-8").splitlines()
    tokens = [(m.token, t) for o, t in zip(originals, translations, strict=True) for m in nsubs_tokens_find(text=o)]
    confirmed = sum(token not in translation for token, translation in tokens)
    assert (confirmed, len(tokens)) == (234, 238)  # token precision 98.3 %


# --- command -----------------------------------------------------------------------------------------


@pytest.mark.django_db
def test_command_lists_candidates_on_stdout(shared_data: Path) -> None:
    summary, listing = run_command(str(shared_data / "stel" / "nsubs_translated_sentences.txt"))
    assert summary["ok"] is True
    assert (summary["lines"], summary["candidates"], summary["candidate_ratio"]) == (100, 5, 0.05)
    assert "loaded" not in summary and not Candidate.objects.exists()
    rows = list(csv.reader(listing, delimiter="\t"))
    assert rows[0] == ["line", "text", "matched_tokens", "suggestions", "rules"]
    assert [row[0] for row in rows[1:]] == ["16", "23", "35", "51", "70"]


@pytest.mark.django_db
def test_command_writes_tsv_and_loads_idempotently(shared_data: Path, tmp_path: Path) -> None:
    source = shared_data / "stel" / "nsubs_sentences.txt"
    out = tmp_path / "candidates.tsv"
    summary, listing = run_command(str(source), "--out", str(out), "--load")
    assert listing == []
    assert (summary["candidates"], summary["loaded"], summary["already_loaded"]) == (100, 100, 0)
    assert summary["rules"] == {"seed": 49, "pattern": 189}
    with out.open(encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle, delimiter="\t"))
    assert len(rows) == 100
    assert rows[0]["text"] == "<3 friends 4ever" and rows[0]["matched_tokens"] == "4ever"
    first = Candidate.objects.get(line_number=1)
    assert first.source_file == str(source.resolve())
    assert first.matched_tokens == [{"token": "4ever", "rule": "seed", "suggestion": "forever"}]
    assert (first.status, first.translation) == (Candidate.Status.PENDING, "")
    summary, _ = run_command(str(source), "--load")
    assert (summary["loaded"], summary["already_loaded"]) == (0, 100)
    assert Candidate.objects.count() == 100


@pytest.mark.django_db
def test_missing_file_is_an_error(tmp_path: Path) -> None:
    error, summary = failing_command(str(tmp_path / "nope.txt"), "--load")
    assert str(tmp_path / "nope.txt") in str(error) and summary["error"]["code"] == "file_not_found"


@pytest.mark.django_db
def test_undecodable_line_names_file_and_line_and_loads_nothing(tmp_path: Path) -> None:
    bad = tmp_path / "bad.txt"
    bad.write_bytes(b"c u l8r m8\ngr8 stuff\n\xff\xfe h8 it\n")
    error, summary = failing_command(str(bad), "--load")
    assert f"{bad}, line 3" in str(error) and summary["error"]["code"] == "invalid_encoding"
    assert not Candidate.objects.exists()


@pytest.mark.django_db
def test_unwritable_out_is_an_error(shared_data: Path, tmp_path: Path) -> None:
    out = tmp_path / "missing-dir" / "c.tsv"
    error, summary = failing_command(str(shared_data / "stel" / "nsubs_sentences.txt"), "--out", str(out), "--load")
    assert str(out) in str(error) and summary["error"]["code"] == "cannot_write"
    assert not Candidate.objects.exists()


# --- review and corpus -------------------------------------------------------------------------------


@pytest.fixture
def candidates(shared_data: Path) -> list[NumberSubstitutionCandidate]:
    nsubs_candidates_load(scan=nsubs_file_scan(path=shared_data / "stel" / "nsubs_sentences.txt"))
    return list(Candidate.objects.order_by("line_number")[:3])


@pytest.mark.django_db
def test_accepting_needs_a_translation(candidates: list[NumberSubstitutionCandidate]) -> None:
    ids = [c.pk for c in candidates]
    with pytest.raises(ApplicationError, match=r"3 candidate\(s\) have no translation.*line 1"):
        nsubs_candidates_set_status(ids=ids, status="accepted")
    assert not Candidate.objects.filter(status="accepted").exists()
    with pytest.raises(IntegrityError), transaction.atomic():  # the rule holds in the database too
        Candidate.objects.filter(pk=ids[0]).update(status="accepted")


@pytest.mark.django_db
def test_accepted_candidates_become_an_nbr_substitution_corpus(
    candidates: list[NumberSubstitutionCandidate], shared_data: Path
) -> None:
    translations = (shared_data / "stel" / "nsubs_translated_sentences.txt").read_text(encoding="utf-8").splitlines()
    for candidate in candidates:
        candidate.translation = translations[candidate.line_number - 1]
        candidate.save()
    assert nsubs_candidates_set_status(ids=[c.pk for c in candidates[:2]], status="accepted") == 2
    nsubs_candidates_set_status(ids=[candidates[2].pk], status="rejected")
    corpus = nsubs_corpus_build(name="nsubs-reviewed")
    assert (corpus.component.name, corpus.import_format, corpus.n_pairs) == ("nbr_substitution", "built", 2)
    pair = corpus.pairs.get(position=0)
    assert (pair.text_1, pair.text_2) == ("<3 friends forever", "<3 friends 4ever")  # plain = 1, substituted = 2
    assert pair.metadata["line"] == 1
    with pytest.raises(ApplicationError, match="exists already"):
        nsubs_corpus_build(name="nsubs-reviewed")
    assert nsubs_corpus_build(name="nsubs-reviewed", ids=[candidates[0].pk], replace=True).n_pairs == 1


@pytest.mark.django_db
def test_corpus_needs_accepted_candidates_that_differ(candidates: list[NumberSubstitutionCandidate]) -> None:
    with pytest.raises(ApplicationError, match="no accepted candidates"):
        nsubs_corpus_build(name="empty")
    first = candidates[0]
    first.translation = first.text
    first.save()
    with pytest.raises(ApplicationError, match="equal to the text"):
        nsubs_candidates_set_status(ids=[first.pk], status="accepted")
    Candidate.objects.filter(pk=first.pk).update(status="accepted")  # e.g. edited in the changelist
    with pytest.raises(ApplicationError, match="equal to the text"):
        nsubs_corpus_build(name="same")
    assert not Corpus.objects.exists()


# --- admin -------------------------------------------------------------------------------------------


@pytest.mark.slow  # seconds: out of `make test-fast`
@pytest.mark.django_db
def test_admin_review_and_build_action(admin_client, candidates: list[NumberSubstitutionCandidate]) -> None:
    url = "/admin/tasks/numbersubstitutioncandidate/"
    page = admin_client.get(url)
    assert page.status_code == 200 and "4ever" in page.content.decode()
    ids = [str(c.pk) for c in candidates[:2]]
    response = admin_client.post(url, {"action": "accept", "_selected_action": ids}, follow=True)
    assert "have no translation" in response.content.decode()
    for candidate, translation in zip(candidates[:2], ["<3 friends forever", "translated"], strict=True):
        candidate.translation = translation
        candidate.save()
    admin_client.post(url, {"action": "accept", "_selected_action": ids}, follow=True)
    assert Candidate.objects.filter(status="accepted").count() == 2
    form = admin_client.post(url, {"action": "build_corpus", "_selected_action": ids})
    assert form.status_code == 200 and "Build corpus" in form.content.decode()
    done = admin_client.post(
        url, {"action": "build_corpus", "_selected_action": ids, "apply": "1", "name": "from-admin"}, follow=True
    )
    assert "Corpus &#x27;from-admin&#x27; created with 2 pairs" in done.content.decode()
    assert Corpus.objects.get(name="from-admin").pairs.count() == 2


@pytest.mark.django_db
def test_admin_changelist_edit_rejects_accepting_untranslated(
    admin_client, candidates: list[NumberSubstitutionCandidate]
) -> None:
    url = "/admin/tasks/numbersubstitutioncandidate/"
    data = {"form-TOTAL_FORMS": "1", "form-INITIAL_FORMS": "1", "_save": "Save", "form-0-id": str(candidates[0].pk),
            "form-0-translation": "", "form-0-status": "accepted"}
    response = admin_client.post(url, data)
    assert response.status_code == 200 and "An accepted candidate needs a translation." in response.content.decode()
    data["form-0-translation"] = "<3 friends forever"
    response = admin_client.post(url, data)
    assert response.status_code == 302
    assert Candidate.objects.get(pk=candidates[0].pk).status == "accepted"


def test_scan_reports_progress(shared_data: Path) -> None:
    calls: list[tuple[int, int]] = []
    nsubs_file_scan(path=shared_data / "stel" / "nsubs_sentences.txt", progress=lambda d, t: calls.append((d, t)))
    assert calls == [(100, 100)]
