"""Rewrites become a corpus: a rewrite study written by simulated writers over the API, one writer excluded, the
accepted rewrites built into a parallel corpus with multi-reference, writer, review and seeded splits by source,
and generate_instances run on it unchanged."""
from __future__ import annotations

import json
from collections import Counter
from io import StringIO
from typing import Any

import pytest
from django.contrib.auth.models import Permission
from django.core.management import CommandError, call_command
from django.test import override_settings

from annotation.models import Participant, Response, Study
from annotation.services.answers import participant_exclude
from annotation.services.studies import study_create
from annotation.services.study_settings import study_settings_build
from core.pseudonyms import is_pseudonym, pseudonym
from tasks.models import Corpus, ParallelPair, TaskInstance
from tasks.services.generation import instances_generate
from tests.annotation.helpers import run_participant

pytestmark = pytest.mark.django_db

SOURCES = [f"hey r u free on day {i} for the thing lol" for i in range(10)]
AGE = [{"name": "age", "text": "Your age?", "choices": ["18-29", "30-49", "50+"], "accept": ["18-29", "30-49", "50+"]}]


def _command(*args: str) -> dict[str, Any]:
    out = StringIO()
    call_command("build_corpus_from_rewrites", *args, stdout=out, stderr=StringIO())
    return json.loads(out.getvalue().strip().splitlines()[-1])


@pytest.fixture
def written_study() -> str:
    study_create(
        slug="rw", item_kind="rewrite", eligibility_questions=AGE,
        items=[{"id": f"src{i}", "source": s, "target_style": "formal"} for i, s in enumerate(SOURCES)],
        settings=study_settings_build(annotators_per_item=2, items_per_batch=7, max_batches=1),
    )
    for writer, age in (("w1", "18-29"), ("w2", "30-49"), ("w3", "50+")):
        def answer(item: dict[str, Any], external_id: str, writer: str = writer) -> str:
            return f"Are you available on day {external_id[3:]} for the event? ({writer})"
        run_participant(slug="rw", pid=writer, answer_for=answer, eligibility={"age": age})
    return "rw"


def test_accepted_rewrites_become_a_split_multi_reference_corpus(written_study, tmp_path):
    assert Response.objects.filter(study__slug="rw").count() == 20  # k = 2 rewrites of 10 sources
    excluded = Participant.objects.get(study__slug="rw", external_id="w3")
    excluded_written = Response.objects.filter(participant=excluded).count()
    participant_exclude(participant=excluded, reason="copied the sources")
    valid = Response.objects.filter(study__slug="rw", is_valid=True)
    assert valid.count() == 20 - excluded_written

    summary = _command("--study", "rw", "--name", "rw-corpus", "--component", "formality", "--seed", "4",
                       "--splits", "0.6,0.2,0.2")
    assert summary["ok"] and summary["pairs"] == valid.count()
    assert summary["sources_per_split"] == {"train": 6, "tune": 2, "test": 2}
    pairs = list(ParallelPair.objects.filter(corpus__name="rw-corpus"))
    writers = {pseudonym(platform=p.platform, external_id=p.external_id)
               for p in Participant.objects.filter(study__slug="rw", external_id__in=("w1", "w2"))}
    assert len(writers) == 2
    for pair in pairs:
        assert not {"w1", "w2", "w3"} & {str(v) for w in ("writer",) for v in pair.metadata[w].values()}
    assert {p.metadata["response"] for p in pairs} == set(valid.values_list("pk", flat=True))
    split_of_group: dict[str, str] = {}
    for pair in pairs:
        meta = pair.metadata
        assert split_of_group.setdefault(meta["group"], meta["split"]) == meta["split"]  # no source in two splits
        assert pair.text_1 == SOURCES[int(meta["group"][3:])]  # informal source on side 1, the rewrite on side 2
        assert pair.text_2.startswith("Are you available") and "(w3)" not in pair.text_2
        # Writers are keyed pseudonyms; with two writers no persona value is k-anonymous (k = 5): none is released.
        assert meta["writer"]["participant"] in writers and meta["writer"]["persona"] == {}
        assert meta["review"]["status"] == "accepted" and meta["study"] == "rw"
        assert meta["n_references"] == sum(1 for p in pairs if p.metadata["group"] == meta["group"])
    assert any(p.metadata["n_references"] == 2 for p in pairs)  # multi-reference kept

    again = _command("--study", "rw", "--name", "rw-corpus-2", "--component", "formality", "--seed", "4",
                     "--splits", "0.6,0.2,0.2")
    other = _command("--study", "rw", "--name", "rw-corpus-3", "--component", "formality", "--seed", "5",
                     "--splits", "0.6,0.2,0.2")
    splits = {name: {p.metadata["group"]: p.metadata["split"]
                     for p in ParallelPair.objects.filter(corpus__name=name)} for name in ("rw-corpus", "rw-corpus-2",
                                                                                            "rw-corpus-3")}
    assert splits["rw-corpus"] == splits["rw-corpus-2"] and splits["rw-corpus"] != splits["rw-corpus-3"]
    assert again["pairs"] == other["pairs"] == summary["pairs"]

    first = _command("--study", "rw", "--name", "rw-first", "--component", "formality", "--references", "first")
    assert first["pairs"] == 10 and first["rewrites_not_in_a_pair"] == summary["pairs"] - 10

    corpus = Corpus.objects.get(name="rw-first")
    run = instances_generate(corpus=corpus, setup="quadruple", seed=1)
    instances = TaskInstance.objects.filter(generation_run=run)
    assert instances.count() == 10
    accepted = set(valid.values_list("pk", flat=True))
    for instance in instances.select_related("anchor_pair"):
        assert instance.anchor_pair.metadata["response"] in accepted
        assert instance.anchor_1 != instance.sentence_1 and instance.anchor_1 in (instance.anchor_pair.text_1,
                                                                                   instance.anchor_pair.text_2)

    # The STEL export: every ID names source items and references whose pairs are accepted rewrites only, and the
    # dataset card says which study the corpus was built from.
    import csv
    import re

    from scoring.export.services import benchmark_export

    out = tmp_path / "rw.tsv"
    benchmark_export(fmt="stel-tsv", out=out, corpus="rw-first")
    with open(out, encoding="utf-8") as handle:
        ids = [row["ID"] for row in csv.DictReader(handle, delimiter="\t")]
    assert len(ids) == 10
    pair_of = {p.source_id: p for p in ParallelPair.objects.filter(corpus__name="rw-first")}
    excluded_ids = set(Response.objects.filter(participant=excluded).values_list("pk", flat=True))
    for stel_id in ids:
        traced = re.findall(r"src\d+#\d+", stel_id)
        assert len(traced) == 4  # A1, A2 of the anchor pair; S1, S2 of the other pair
        for source_id in traced:
            assert pair_of[source_id].metadata["response"] in accepted - excluded_ids
    card = json.loads((tmp_path / "rw.card.json").read_text())
    built = card["sources"][0]["built_from_rewrites"]
    assert built["study"] == "rw" and built["references"] == "first" and built["accepted_rewrites"] == valid.count()
    assert "accepted rewrites of study `rw`" in (tmp_path / "rw.card.md").read_text()


def test_bad_requests_are_refused_and_nothing_is_stored(written_study):
    study_create(slug="lik", item_kind="likert", questions=[{"name": "q", "min": 1, "max": 5}],
                 items=[{"id": "a", "source": "s", "rewrite": "r"}], eligibility_questions=[])
    study_create(slug="empty-rw", item_kind="rewrite", items=[{"id": "a", "source": "s", "target_style": "formal"}],
                 eligibility_questions=[])
    study_create(
        slug="odd-rw", item_kind="rewrite", eligibility_questions=[],
        items=[{"id": "a", "source": "hello there friend", "target_style": "shouty"}],
        settings=study_settings_build(annotators_per_item=1),
    )
    run_participant(slug="odd-rw", pid="x", answer_for=lambda item, ext: "HELLO THERE FRIEND!!!")
    for args, message in [
        (["--study", "nope"], "does not exist"),
        (["--study", "lik"], "not rewrites"),
        (["--study", "empty-rw"], "no accepted rewrites"),
        (["--study", "rw", "--splits", "0.5,0.5"], "--splits"),
        (["--study", "rw", "--component", "nope"], "unknown style component"),
        (["--study", "odd-rw"], "target style 'shouty'"),
    ]:
        out = StringIO()
        base = ["--name", "bad", "--component", "formality"]
        with pytest.raises(CommandError):
            call_command("build_corpus_from_rewrites", *base, *args, stdout=out, stderr=StringIO())
        last = json.loads(out.getvalue().strip().splitlines()[-1])
        assert last["ok"] is False and message in last["error"]["message"], last
    assert not Corpus.objects.filter(name="bad").exists()
    assert _command("--study", "odd-rw", "--name", "odd", "--component", "formality", "--rewrite-side", "2")["pairs"] \
        == 1
    _command("--study", "rw", "--name", "taken", "--component", "formality")
    with pytest.raises(CommandError):
        call_command("build_corpus_from_rewrites", "--study", "rw", "--name", "taken", "--component", "formality",
                     stdout=StringIO(), stderr=StringIO())


def test_rating_studies_from_a_rewrite_study(written_study):
    participant_exclude(participant=Participant.objects.get(study__slug="rw", external_id="w3"), reason="test")
    valid = Response.objects.filter(study__slug="rw", is_valid=True)
    out = StringIO()
    call_command("create_study", "--slug", "rw-likert", "--kind", "likert", "--preset", "gyafc", "--outputs-study",
                 "rw", "--eligibility", "none", stdout=out)
    likert = json.loads(out.getvalue().strip().splitlines()[-1])
    assert likert["items"] == valid.count()
    from annotation.models import Study

    items = list(Study.objects.get(slug="rw-likert").items.all())
    assert {i.payload["response"] for i in items} == set(valid.values_list("pk", flat=True))
    system = {pid: "writer:" + pseudonym(platform=p.platform, external_id=pid)
              for pid, p in ((p.external_id, p) for p in Participant.objects.filter(study__slug="rw"))}
    assert all(i.payload["system"] in {system["w1"], system["w2"]} and i.payload["rewrite_study"] == "rw"
               for i in items)

    out = StringIO()
    call_command("create_study", "--slug", "rw-rank", "--kind", "ranking", "--preset", "gyafc", "--outputs-study",
                 "rw", "--eligibility", "none", "--annotators-per-item", "1", stdout=out)
    ranking = Study.objects.get(slug="rw-rank")
    two = [source for source in {r.study_item.external_id for r in valid.select_related("study_item")}
           if valid.filter(study_item__external_id=source).count() == 2]
    assert sorted(ranking.items.values_list("external_id", flat=True)) == sorted(two) and two

    def first_writer_best(item: dict[str, Any], external_id: str) -> list[str]:
        return sorted((o["id"] for o in item["outputs"]),
                      key=lambda oid: "(w1)" not in next(o["text"] for o in item["outputs"] if o["id"] == oid))
    run_participant(slug="rw-rank", pid="judge", answer_for=first_writer_best)
    out = StringIO()
    call_command("rank_systems", "--study", "rw-rank", stdout=out, stderr=StringIO())
    systems = json.loads(out.getvalue().strip().splitlines()[-1])["systems"]
    assert [(s["system"], s["mean_rank"]) for s in systems] == [(system["w1"], 1.0), (system["w2"], 2.0)]

    with pytest.raises(CommandError):
        call_command("create_study", "--slug", "x", "--kind", "likert", "--preset", "gyafc", "--outputs-study", "lik",
                     "--eligibility", "none", stdout=StringIO())


@override_settings(STYLECROWD_K_ANONYMITY=1)  # three writers: released personas are only possible with k = 1
def test_persona_cut_makes_a_two_style_corpus_from_one_attribute():
    from tasks.models import StyleComponent

    study_create(
        slug="pastel", item_kind="rewrite", eligibility_questions=AGE,
        items=[{"id": f"src{i}", "source": s, "target_style": "formal"} for i, s in enumerate(SOURCES)],
        settings=study_settings_build(annotators_per_item=3, items_per_batch=10, max_batches=1),
    )
    for writer, age in (("young", "18-29"), ("middle", "30-49"), ("old", "50+")):
        run_participant(slug="pastel", pid=writer, eligibility={"age": age},
                        answer_for=lambda item, ext, writer=writer: f"{writer} writes source {ext} in their words")
    StyleComponent.objects.create(name="age-cut", label_1="18-29", label_2="50+",
                                  kind=StyleComponent.Kind.CHARACTERISTIC)
    summary = _command("--study", "pastel", "--name", "pastel-age", "--component", "age-cut", "--split-by",
                       "persona.age", "--seed", "2")
    assert summary["pairs"] == 10 and summary["rewrites_not_in_a_pair"] == 10 and summary["split_by"] == "persona.age"
    for pair in ParallelPair.objects.filter(corpus__name="pastel-age"):
        assert pair.text_1.startswith("young writes") and pair.text_2.startswith("old writes")
        assert pair.metadata["writer_1"]["persona"] == {"age": "18-29"}
        assert pair.metadata["writer_2"]["persona"] == {"age": "50+"}
        assert pair.text_1.endswith(f"{pair.metadata['group']} in their words")
        assert pair.text_2.endswith(f"{pair.metadata['group']} in their words")
        assert is_pseudonym(pair.metadata["writer_1"]["participant"])
    corpus_params = ParallelPair.objects.filter(corpus__name="pastel-age").first().corpus.import_params
    assert corpus_params["writers"]["persona_k_anonymity"]["k"] == 1
    run = instances_generate(corpus=Corpus.objects.get(name="pastel-age"), setup="triple", seed=3)
    assert TaskInstance.objects.filter(generation_run=run).count() == 10
    out = StringIO()
    with pytest.raises(CommandError):
        call_command("build_corpus_from_rewrites", "--study", "pastel", "--name", "x", "--component", "age-cut",
                     "--split-by", "age", stdout=out, stderr=StringIO())
    assert "persona.ATTRIBUTE" in out.getvalue()


def test_the_admin_action_builds_the_same_corpus_as_the_command(written_study, admin_client, django_user_model):
    changelist = "/admin/annotation/study/"
    study_pk = Study.objects.get(slug="rw").pk
    form_page = admin_client.post(changelist, {"action": "build_corpus_from_rewrites", "_selected_action": [study_pk]})
    assert form_page.status_code == 200 and b"Build the corpus" in form_page.content  # the intermediate page
    bad = admin_client.post(changelist, {"action": "build_corpus_from_rewrites", "_selected_action": [study_pk],
                                         "apply": "1", "name": "web-corpus", "component": "formality", "seed": 4,
                                         "splits": "0.6,0.2", "references": "all"})
    assert bad.status_code == 200 and not Corpus.objects.filter(name="web-corpus").exists()
    built = admin_client.post(changelist, {"action": "build_corpus_from_rewrites", "_selected_action": [study_pk],
                                           "apply": "1", "name": "web-corpus", "component": "formality", "seed": 4,
                                           "splits": "0.6,0.2,0.2", "references": "all"})
    corpus = Corpus.objects.get(name="web-corpus")
    assert built.status_code == 302 and built.url == f"/admin/tasks/corpus/{corpus.pk}/change/"
    _command("--study", "rw", "--name", "cli-corpus", "--component", "formality", "--seed", "4",
             "--splits", "0.6,0.2,0.2")

    def rows(name: str) -> list[tuple]:
        return sorted((p.text_1, p.text_2, p.metadata["split"]) for p in ParallelPair.objects.filter(corpus__name=name))
    assert rows("web-corpus") == rows("cli-corpus") and len(rows("web-corpus")) == 20

    viewer = django_user_model.objects.create_user("viewer", password="pw", is_staff=True)
    viewer.user_permissions.add(*Permission.objects.filter(codename__in=["view_study", "change_study"]))
    admin_client.force_login(viewer)
    refused = admin_client.post(changelist, {"action": "build_corpus_from_rewrites", "_selected_action": [study_pk],
                                             "apply": "1", "name": "sneaky", "component": "formality", "seed": 4,
                                             "splits": "0.6,0.2,0.2", "references": "all"}, follow=True)
    assert refused.status_code == 200 and not Corpus.objects.filter(name="sneaky").exists()


def test_writer_personas_on_pairs_are_k_anonymous():
    from tasks.models import StyleComponent

    study_create(
        slug="kanon", item_kind="rewrite", eligibility_questions=AGE,
        items=[{"id": f"src{i}", "source": s, "target_style": "formal"} for i, s in enumerate(SOURCES)],
        settings=study_settings_build(annotators_per_item=7, items_per_batch=10, max_batches=1),
    )
    ages = ["18-29"] * 5 + ["30-49", "50+"]  # five share an age; two are alone in theirs
    for n, age in enumerate(ages):
        run_participant(slug="kanon", pid=f"kw{n}", eligibility={"age": age},
                        answer_for=lambda item, ext, n=n: f"Writer {n} rewrote source {ext} formally, yes indeed.")
    StyleComponent.objects.get_or_create(name="formality", defaults={"label_1": "informal", "label_2": "formal"})
    summary = _command("--study", "kanon", "--name", "kanon-corpus", "--component", "formality", "--seed", "1")
    assert summary["ok"]
    pairs = list(ParallelPair.objects.filter(corpus__name="kanon-corpus"))
    writers = {p.metadata["writer"]["participant"]: p.metadata["writer"]["persona"] for p in pairs}
    assert len(writers) == 7 and all(is_pseudonym(w) for w in writers)
    assert Counter(json.dumps(v) for v in writers.values()) == {"{}": 2, '{"age": "18-29"}': 5}
    params = pairs[0].corpus.import_params["writers"]["persona_k_anonymity"]
    assert (params["k"], params["withheld"], params["generalised"]) == (5, 2, 0)
    assert not any(f"kw{n}" in json.dumps(p.metadata) for p in pairs for n in range(7))
