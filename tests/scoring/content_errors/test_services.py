"""The content-error test-set builder (Pauli et al. 2025): editors, the build command on real TurkCorpus pairs, the
admin review with its permission, the rating study from accepted errors, and the optional local model."""
from __future__ import annotations

import csv
import json
from io import StringIO
from pathlib import Path

import pytest
from django.contrib.auth.models import Permission, User
from django.core.management import CommandError, call_command
from django.urls import reverse
from hypothesis import given, settings
from hypothesis import strategies as st

from annotation.models import Study
from scoring.content_errors.editors import ERROR_TYPES, content_error_make
from scoring.content_errors.generative import edit_between
from scoring.models import ContentError, ContentErrorSet

SENTENCES = {
    "Please send the 3 reports to Anna by Friday.": {"substitution": "number", "deletion": "phrase"},
    "Will you be attending the meeting tomorrow?": {"substitution": "date", "deletion": "time"},
    "I will be late, as the traffic is very heavy.": {"substitution": "noun", "deletion": "clause"},
    "We met Laura in the garden after lunch.": {"substitution": "name", "deletion": "phrase"},
}


@pytest.mark.parametrize("text", list(SENTENCES))
@pytest.mark.parametrize("error_type", ERROR_TYPES)
def test_each_editor_records_its_edit_and_is_deterministic(text, error_type):
    edit = content_error_make(text=text, error_type=error_type, seed=7)
    assert edit is not None and edit.error_type == error_type
    assert text[edit.start:edit.end] == edit.before
    erroneous = edit.apply(text)
    assert erroneous != text
    assert content_error_make(text=text, error_type=error_type, seed=7) == edit
    expected_rule = SENTENCES[text].get(error_type)
    if expected_rule:
        assert edit.rule == expected_rule, (edit, erroneous)
    if error_type == "deletion":
        assert edit.after == "" and len(erroneous) < len(text)
    if error_type == "fabrication":
        assert len(erroneous) > len(text)


def test_substitution_changes_the_number_and_seeds_vary_the_choice():
    text = "Please send the 3 reports to Anna by Friday."
    edits = {content_error_make(text=text, error_type="substitution", seed=s).after for s in range(20)}
    assert "3" not in edits and len(edits) > 1
    assert content_error_make(text="ok ok", error_type="deletion", seed=0) is None
    with pytest.raises(ValueError, match="error type"):
        content_error_make(text=text, error_type="swap", seed=0)


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("abcdeFGH 0123456789,.?'-")), max_size=80), st.integers(0, 50),
       st.sampled_from(ERROR_TYPES))
def test_any_edit_is_one_consistent_span(text, seed, error_type):
    edit = content_error_make(text=text, error_type=error_type, seed=seed)
    if edit is not None:
        assert 0 <= edit.start <= edit.end <= len(text)
        assert text[edit.start:edit.end] == edit.before
        assert edit.apply(text).strip() != text.strip()
        assert edit_between(good=text, bad=edit.apply(text), error_type=error_type, rule="x").apply(text) == \
            edit.apply(text)


def _turkcorpus_pairs(shared_data: Path, tmp_path: Path, n: int = 40) -> Path:
    """(complex Wikipedia sentence, first non-empty simplification) from the real TurkCorpus test file."""
    out = tmp_path / "pairs.csv"
    with open(shared_data / "turkcorpus" / "test.8turkers.organized.tsv", encoding="utf-8") as src, \
            open(out, "w", newline="", encoding="utf-8") as dst:
        writer = csv.writer(dst)
        writer.writerow(["id", "source", "rewrite", "target_style"])
        for row in list(csv.reader(src, delimiter="\t", quoting=csv.QUOTE_NONE))[:n]:
            simple = next(t.strip() for t in row[2:] if t.strip())
            writer.writerow([f"tc-{row[0]}", row[1].strip(), simple, "simple"])
    return out


def _run(*args: str) -> dict:
    out = StringIO()
    call_command("build_content_errors", *args, stdout=out, stderr=StringIO())
    return json.loads(out.getvalue().strip().splitlines()[-1])


@pytest.mark.django_db
def test_command_builds_reviewable_errors_from_real_pairs(shared_data, tmp_path):
    pairs = _turkcorpus_pairs(shared_data, tmp_path)
    summary = _run("--name", "tc-errors", "--pairs", str(pairs), "--seed", "3")
    assert summary["ok"] and summary["pairs"] == 40
    stored = ContentError.objects.filter(error_set__name="tc-errors")
    assert summary["errors"] == stored.count() == sum(summary["per_type"].values())
    for error_type in ERROR_TYPES:
        assert summary["per_type"][error_type] + summary["skipped"][error_type] == 40
        assert summary["per_type"][error_type] >= 20, summary  # Wikipedia sentences offer most editors something
    for error in stored:
        assert error.review == "pending"
        assert error.rewrite[error.edit["start"]:error.edit["end"]] == error.edit["before"]
        assert error.erroneous == (error.rewrite[:error.edit["start"]] + error.edit["after"]
                                   + error.rewrite[error.edit["end"]:]).strip()
    again = _run("--name", "tc-errors-2", "--pairs", str(pairs), "--seed", "3")
    first = list(stored.values_list("pair_id", "error_type", "erroneous"))
    second = list(ContentError.objects.filter(error_set__name="tc-errors-2").values_list("pair_id", "error_type",
                                                                                          "erroneous"))
    assert again["per_type"] == summary["per_type"] and first == second


@pytest.mark.django_db
def test_command_reads_a_corpus_and_refuses_bad_input(tmp_path):
    from tasks.services.imports import corpus_import

    aligned = [tmp_path / "informal.txt", tmp_path / "formal.txt"]
    aligned[0].write_text("gonna be late, traffic is crazy\nthx for the help yesterday\n")
    aligned[1].write_text("I will be late, as the traffic is very heavy.\nThank you for your help yesterday.\n")
    corpus_import(name="mini", component="formality", import_format="aligned", paths=[str(p) for p in aligned])
    summary = _run("--name", "mini-errors", "--corpus", "mini", "--types", "substitution,deletion")
    assert summary["pairs"] == 2 and set(summary["per_type"]) == {"substitution", "deletion"}
    error = ContentError.objects.filter(error_set__name="mini-errors").first()
    assert error.source.startswith(("gonna", "thx")) and error.target_style == "formal"

    bad = tmp_path / "bad.tsv"
    bad.write_text("id\tsource\trewrite\na\tone\ttwo words here\na\tthree\tfour\n")
    for args, message in [
        (["--pairs", str(bad)], "line 3: duplicate id 'a'"),
        (["--pairs", str(tmp_path / "none.csv")], "file not found"),
        (["--corpus", "mini", "--types", "swap"], "error types"),
        (["--corpus", "nope"], "corpus 'nope' not found"),
        ([], "exactly one of"),
    ]:
        out = StringIO()
        with pytest.raises(CommandError):
            call_command("build_content_errors", "--name", "bad", *args, stdout=out, stderr=StringIO())
        last = json.loads(out.getvalue().strip().splitlines()[-1])
        assert last["ok"] is False and message in last["error"]["message"], last
    assert not ContentErrorSet.objects.filter(name="bad").exists()
    with pytest.raises(CommandError):
        call_command("build_content_errors", "--name", "mini-errors", "--corpus", "mini", stdout=StringIO())


@pytest.mark.django_db
def test_the_english_editors_refuse_a_french_corpus_or_file(tmp_path):
    from tasks.services.imports import corpus_import  # the corpus side of the test only

    aligned = [tmp_path / "informal.txt", tmp_path / "formal.txt"]
    aligned[0].write_text("on se voit demain à deux heures, ok ?\nmerci pour ton aide hier\n", encoding="utf-8")
    aligned[1].write_text("Nous nous verrons demain à quatorze heures.\nMerci pour votre aide d'hier.\n",
                          encoding="utf-8")
    corpus_import(name="mini-fr", component="formality", import_format="aligned", paths=[str(p) for p in aligned],
                  language="fr")
    pairs = tmp_path / "pairs.tsv"
    pairs.write_text("id\tsource\trewrite\n1\tmerci pour ton aide\tMerci pour votre aide.\n", encoding="utf-8")
    for args in (["--corpus", "mini-fr"], ["--pairs", str(pairs), "--language", "fr-FR"]):
        out = StringIO()
        with pytest.raises(CommandError):
            call_command("build_content_errors", "--name", "fr-errors", *args, stdout=out, stderr=StringIO())
        error = json.loads(out.getvalue().strip().splitlines()[-1])["error"]
        assert error["code"] == "unsupported_language" and "English word lists" in error["message"]
        assert "--model DIR" in error["message"]
    assert not ContentErrorSet.objects.filter(name="fr-errors").exists()
    # The same French pairs declared English (a researcher's explicit choice) are edited by the rules.
    assert _run("--name", "fr-as-en", "--corpus", "mini-fr", "--language", "en")["pairs"] == 2


@pytest.mark.django_db
def test_admin_review_needs_change_permission_and_study_takes_accepted_only(shared_data, tmp_path, client):
    _run("--name", "rev", "--pairs", str(_turkcorpus_pairs(shared_data, tmp_path, n=6)), "--seed", "1")
    errors = list(ContentError.objects.filter(error_set__name="rev").order_by("pk"))
    changelist = reverse("admin:scoring_contenterror_changelist")

    viewer = User.objects.create_user("viewer", password="pw", is_staff=True)
    viewer.user_permissions.add(Permission.objects.get(codename="view_contenterror"))
    client.force_login(viewer)
    page = client.get(changelist)
    assert page.status_code == 200 and "Accept the selected" not in page.content.decode()
    client.post(changelist, {"action": "accept", "_selected_action": [errors[0].pk]})
    assert ContentError.objects.get(pk=errors[0].pk).review == "pending"

    reviewer = User.objects.create_user("reviewer", password="pw", is_staff=True)
    reviewer.user_permissions.add(*Permission.objects.filter(codename__in=["view_contenterror",
                                                                           "change_contenterror"]))
    client.force_login(reviewer)
    accept, reject = errors[:4], errors[4:6]
    response = client.post(changelist, {"action": "accept", "_selected_action": [e.pk for e in accept]})
    assert response.status_code == 302
    client.post(changelist, {"action": "reject", "_selected_action": [e.pk for e in reject]})
    assert set(ContentError.objects.filter(review="accepted").values_list("pk", flat=True)) == {e.pk for e in accept}
    assert ContentError.objects.get(pk=reject[0].pk).reviewed_by == "reviewer"

    summary = _run("--name", "rev", "--study", "rev-rating")
    study = Study.objects.get(slug="rev-rating")
    assert summary["questions"] == ["style_strength", "content_preservation"]
    items = list(study.items.order_by("position"))
    goods = {e.pair_id for e in accept}
    assert len(items) == len(accept) + len(goods)
    errors_shown = {i.payload["content_error"] for i in items if i.payload["system"] != "good"}
    assert errors_shown == {e.pk for e in accept}
    assert all(i.payload["source"] and i.payload["rewrite"] for i in items)
    assert ContentErrorSet.objects.get(name="rev").study == study
    out = StringIO()
    with pytest.raises(CommandError):
        call_command("build_content_errors", "--name", "rev", "--study", "rev-rating-2", stdout=out)
    assert "already has the study" in out.getvalue()


@pytest.fixture
def tiny_model_dir(tmp_path: Path) -> Path:
    """A randomly initialised GPT-2 with a word-level tokenizer trained here: no download anywhere."""
    from tokenizers import Tokenizer, models, pre_tokenizers, trainers
    from transformers import GPT2Config, GPT2LMHeadModel, PreTrainedTokenizerFast

    tokenizer = Tokenizer(models.WordLevel(unk_token="[UNK]"))
    tokenizer.pre_tokenizer = pre_tokenizers.Whitespace()
    corpus = list(SENTENCES) + ["Change one number name date or noun so that the meaning is wrong",
                                "Leave out one piece of information Add that is not in the original",
                                "Original With the error : ."]
    tokenizer.train_from_iterator(corpus, trainers.WordLevelTrainer(special_tokens=["[UNK]", "[EOS]"]))
    fast = PreTrainedTokenizerFast(tokenizer_object=tokenizer, unk_token="[UNK]", eos_token="[EOS]")
    path = tmp_path / "tiny-lm"
    fast.save_pretrained(path)
    import torch

    torch.manual_seed(0)
    GPT2LMHeadModel(GPT2Config(vocab_size=len(fast), n_positions=128, n_embd=16, n_layer=1, n_head=2,
                               eos_token_id=1, bos_token_id=1)).save_pretrained(path)
    return path


@pytest.mark.slow
@pytest.mark.django_db
def test_local_model_editor_records_type_and_edit(tiny_model_dir, tmp_path):
    pairs = tmp_path / "pairs.jsonl"
    pairs.write_text("".join(json.dumps({"id": str(i), "source": s.lower(), "rewrite": s}) + "\n"
                             for i, s in enumerate(SENTENCES)))
    summary = _run("--name", "lm", "--pairs", str(pairs), "--model", str(tiny_model_dir), "--types", "fabrication")
    assert summary["generator"] == str(tiny_model_dir)
    stored = list(ContentError.objects.filter(error_set__name="lm"))
    assert len(stored) + summary["skipped"]["fabrication"] == len(SENTENCES)
    assert stored, "the random model should still produce text that differs from the rewrite"
    for error in stored:
        assert error.rule == "model:tiny-lm" and error.error_type == "fabrication"
        assert error.rewrite[error.edit["start"]:error.edit["end"]] == error.edit["before"]
        assert error.erroneous != error.rewrite
    again = _run("--name", "lm-2", "--pairs", str(pairs), "--model", str(tiny_model_dir), "--types", "fabrication")
    assert again["per_type"] == summary["per_type"]
    assert sorted(ContentError.objects.filter(error_set__name="lm-2").values_list("erroneous", flat=True)) == \
        sorted(e.erroneous for e in stored)
    out = StringIO()
    with pytest.raises(CommandError):
        call_command("build_content_errors", "--name", "lm-3", "--pairs", str(pairs), "--model",
                     str(tmp_path / "missing"), stdout=out)
    assert "model_not_found" in out.getvalue()


@pytest.mark.django_db
def test_admin_creates_the_rating_study_only_with_change_permission(shared_data, tmp_path, client):
    _run("--name", "adm", "--pairs", str(_turkcorpus_pairs(shared_data, tmp_path, n=4)), "--types", "deletion")
    error_set = ContentErrorSet.objects.get(name="adm")
    changelist = reverse("admin:scoring_contenterrorset_changelist")
    viewer = User.objects.create_user("viewer", password="pw", is_staff=True)
    viewer.user_permissions.add(Permission.objects.get(codename="view_contenterrorset"))
    client.force_login(viewer)
    assert "Create the rating study" not in client.get(changelist).content.decode()
    client.post(changelist, {"action": "create_rating_study", "_selected_action": [error_set.pk]})
    assert not Study.objects.filter(slug="adm-rating").exists()

    owner = User.objects.create_user("owner", password="pw", is_staff=True)
    owner.user_permissions.add(*Permission.objects.filter(codename__in=["view_contenterrorset", "view_contenterror",
                                                                        "change_contenterrorset"]))
    client.force_login(owner)
    refused = client.post(changelist, {"action": "create_rating_study", "_selected_action": [error_set.pk]},
                          follow=True)
    assert "no accepted errors" in refused.content.decode()  # nothing reviewed yet: nothing goes to raters
    error_set.errors.update(review="accepted")
    done = client.post(changelist, {"action": "create_rating_study", "_selected_action": [error_set.pk]},
                       follow=True)
    assert "study adm-rating created" in done.content.decode()
    study = Study.objects.get(slug="adm-rating")
    assert study.items.count() == 2 * error_set.errors.count()  # one deletion per pair here: good + error each
    assert client.get(reverse("admin:scoring_contenterror_changelist") + "?review__exact=accepted").status_code == 200
