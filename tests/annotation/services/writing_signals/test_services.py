"""Writing signals of rewrites (README, "Writing telemetry and signals"): each measured with its evidence against a
researcher-set threshold; the review queue shows, filters and sorts by them; the review service flags and rejects
only under the researcher's rule; recommendations, decisions, the corpus and its dataset card carry the facts."""
from __future__ import annotations

import json
from datetime import timedelta
from io import StringIO
from typing import Any

import pytest
from django.contrib.auth.models import Permission, User
from django.core.management import call_command
from django.test import Client
from django.utils import timezone
from rest_framework.test import APIClient

from annotation.models import Reservation, Response, RewriteReview, RewriteSettings, Study, WritingSignal
from annotation.services.exports import decisions_serialize
from annotation.services.review import review_autoflag, review_decide, review_queue
from annotation.services.rewrite_corpus import corpus_build_from_rewrites
from annotation.services.rewrites import rewrite_study_create
from annotation.services.writing_signals import measures
from annotation.services.writing_signals.jobs import writing_signals_refresh
from annotation.services.writing_signals.registry import thresholds_parse, thresholds_validate
from annotation.services.writing_signals.services import writing_signals_compute
from core.errors import ApplicationError
from core.models import Job
from tests.annotation.helpers import Participant, settings_pop
from tests.annotation.services.test_telemetry import telemetry
from tests.helpers import assert_api_error

pytestmark = pytest.mark.django_db
SOURCE = "hey r u free on friday for the thing lol"
OTHER = "gonna be late again for the meeting today sorry"


def study(slug: str = "sig", **extra: Any) -> Study:
    made, _ = rewrite_study_create(slug=slug, sources=[("s1", SOURCE), ("s2", OTHER)], target_style="formal",
                                   eligibility_questions=[], filters={"min_words": 0},
                                   settings=settings_pop(extra, annotators_per_item=6, items_per_batch=2), **extra)
    return made


def write(slug: str, pid: str, texts: list[str], blocks: list[dict[str, Any] | None], *, ago: float = 90) -> list[int]:
    """One writer through the participant API: each item served `ago` seconds before its answer."""
    person = Participant(APIClient(), slug, pid)
    person.start()
    person.consent()
    ids = []
    for text, block in zip(texts, blocks, strict=True):
        item = person.next().json()["item"]
        Reservation.objects.filter(public_id=item["id"]).update(served_at=timezone.now() - timedelta(seconds=ago))
        body = {"item": item["id"], "answer": text, **({"telemetry": block} if block is not None else {})}
        response = person.client.post(f"/api/v1/sessions/{person.token}/answers/", body, format="json")
        assert response.status_code == 201, response.content
        ids.append(Response.objects.get(reservation__public_id=item["id"]).pk)
    return ids


def careful(text: str) -> dict[str, Any]:
    return telemetry(typed_chars=len(text) + 6, keystrokes=len(text) + 10, active_ms=len(text) * 250)


def pasted(text: str) -> dict[str, Any]:
    """Away for a minute (a chatbot in another tab), back, the whole answer pasted at once."""
    return telemetry(keystrokes=0, deletions=0, typed_chars=0, deleted_chars=0, pasted_chars=len(text),
                     paste_count=1, pastes=[{"at_ms": 70_000, "chars": len(text), "matched_source": False}],
                     first_key_ms=None, submit_ms=75_000, active_ms=0, focus_loss_count=1, focus_loss_ms=60_000,
                     focus_losses=[{"at_ms": 8000, "ms": 60_000, "next_insert_chars": len(text),
                                    "next_insert_after_ms": 2000}])


def machine(text: str) -> dict[str, Any]:
    """Typed by a program at 50 characters a second."""
    return telemetry(keystrokes=len(text), deletions=0, typed_chars=len(text), deleted_chars=0,
                     active_ms=len(text) * 20, first_key_ms=500, submit_ms=3000, focus_loss_count=0,
                     focus_loss_ms=0, focus_losses=[])


TEXTS = {
    "careful": ["Are you available on Friday for the event?", "I will be late for the meeting again, I apologise."],
    "paster": ["Would you be free this Friday to attend the occasion?",
               "I regret to inform you that I shall once more be late for today's meeting."],
    "machine": ["Might you be available on Friday for the gathering?",
                "Apologies, I am going to arrive late to the meeting once again today."],
}


def crowd(slug: str = "sig") -> dict[str, list[int]]:
    study(slug)
    ids = {
        "careful": write(slug, "careful1", TEXTS["careful"], [careful(t) for t in TEXTS["careful"]]),
        "paster": write(slug, "paster1", TEXTS["paster"], [pasted(t) for t in TEXTS["paster"]]),
        "machine": write(slug, "machine1", TEXTS["machine"], [machine(t) for t in TEXTS["machine"]]),
        "old_client": write(slug, "old1", ["Are you free on Friday for the thing, sir?",
                                           "I am going to be late for the meeting again today."], [None, None]),
    }
    # A copier: the careful writer's first rewrite with one word changed, typed at a person's speed, later.
    copied = "Are you available on Friday for this event?"
    ids["copier"] = write(slug, "copier1", [copied, "I shall arrive late to the meeting, my apologies."],
                          [careful(copied), careful("I shall arrive late to the meeting, my apologies.")])
    return ids


def flags(response_id: int) -> set[str]:
    return set(WritingSignal.objects.filter(response_id=response_id, flagged=True).values_list("signal", flat=True))


def test_each_signal_flags_its_writer_and_spares_the_careful_typist():
    ids = crowd()
    summary = writing_signals_compute(study=Study.objects.get(slug="sig"))
    assert summary["rewrites"] == 10 and summary["telemetry"] == {"none": 2, "consistent": 8, "inconsistent": 0}
    assert summary["off"]["llm_likeness"] == "no local language model configured"
    assert "no model endpoint" in summary["off"]["model_similarity"]
    assert [flags(i) for i in ids["careful"]] == [set(), set()]
    assert all(flags(i) == {"mostly_pasted", "focus_loss_insert"} for i in ids["paster"])
    assert all(flags(i) == {"typing_speed"} for i in ids["machine"])
    assert flags(ids["copier"][0]) == {"near_duplicate"} and flags(ids["copier"][1]) == set()
    assert [flags(i) for i in ids["old_client"]] == [set(), set()]  # no telemetry: only the text signals
    original = WritingSignal.objects.get(response_id=ids["careful"][0], signal="near_duplicate")
    copy = WritingSignal.objects.get(response_id=ids["copier"][0], signal="near_duplicate")
    assert original.score == copy.score >= 90 and not original.flagged  # the earlier of the pair is not flagged
    assert f"alike with rewrite #{ids['careful'][0]} by prolific:careful1, written after it" in copy.evidence
    pasted_row = WritingSignal.objects.get(response_id=ids["paster"][0], signal="mostly_pasted")
    assert pasted_row.score == 1.0 and pasted_row.threshold == 0.5
    assert pasted_row.evidence.startswith("100% of the text's 53 characters pasted from outside the page")
    speed = WritingSignal.objects.get(response_id=ids["machine"][0], signal="typing_speed")
    assert speed.score == 50.0 and "50.0 characters per second" in speed.evidence
    away = WritingSignal.objects.get(response_id=ids["paster"][0], signal="focus_loss_insert")
    assert away.score == 60 and "away from the page for 60 s, then 53 characters inserted at once" in away.evidence
    assert summary["flagged"] == {"telemetry_inconsistent": 0, "mostly_pasted": 2, "typing_speed": 2,
                                  "focus_loss_insert": 2, "near_duplicate": 1}
    assert summary["flagged_rewrites"] == 5


def test_thresholds_are_the_researchers_and_a_null_switches_a_signal_off():
    ids = crowd()
    settings = RewriteSettings.objects.get(study__slug="sig")
    settings.signal_thresholds = {"typing_speed": 60, "near_duplicate": None, "mostly_pasted": 0.5}
    settings.save()
    summary = writing_signals_compute(study=Study.objects.get(slug="sig"))
    assert all(flags(i) == set() for i in ids["machine"])  # 50/s is under the study's 60
    assert flags(ids["copier"][0]) == set() and "near_duplicate" in summary["off"]
    assert not WritingSignal.objects.filter(signal="near_duplicate").exists()
    assert WritingSignal.objects.get(response_id=ids["machine"][0], signal="typing_speed").threshold == 60


def test_inconsistent_telemetry_is_a_signal_of_its_own():
    study("inc")
    forged = write("inc", "forger", ["Are you available on Friday for the event?"],
                   [careful("x" * 40) | {"typed_chars": 5}])
    writing_signals_compute(study=Study.objects.get(slug="inc"))
    row = WritingSignal.objects.get(response_id=forged[0], signal="telemetry_inconsistent")
    assert row.flagged and "cannot make a text of" in row.evidence


@pytest.mark.parametrize(("raw", "words"), [
    ({"typing_speed": 0}, "typing_speed must be a number from 1 to 1000"),
    ({"mostly_pasted": 2}, "mostly_pasted must be a number from 0.01 to 1"),
    ({"nonsense": 1}, "unknown name 'nonsense'"),
    ({"focus_loss_insert_chars": None}, "focus_loss_insert_chars must be a number"),
    ([1], "must be an object"),
])
def test_bad_thresholds_are_refused_naming_the_entry(raw, words):
    with pytest.raises(ApplicationError, match=words):
        thresholds_validate(raw)


def test_threshold_pairs_from_the_command_line():
    assert thresholds_parse(["typing_speed=20", "near_duplicate=off"]) == {"typing_speed": 20.0,
                                                                          "near_duplicate": None}
    with pytest.raises(ApplicationError, match="NAME=VALUE"):
        thresholds_parse(["typing_speed"])


def test_near_duplicates_of_short_rewrites_and_of_the_same_writer_never_flag():
    at = timezone.now()
    rows = [(1, "a", "I do not know.", at), (2, "b", "I do not know.", at + timedelta(seconds=1)),
            (3, "a", "I do not know!", at + timedelta(seconds=2))]
    out = measures.near_duplicates(rows, similarity=measures.char_similarity)
    assert out[2].score == 100 and not out[2].eligible  # too short to judge: people coincide
    assert out[1].details["other_writer"] == "b"  # never compared with its own writer's rewrite


def test_the_review_service_flags_without_rejecting_unless_the_researcher_sets_a_rule():
    ids = crowd()
    signals_study = Study.objects.get(slug="sig")
    summary = review_autoflag(study=signals_study)
    assert summary["auto_rejected"] == 0 and summary["auto_reject"] == []
    assert not RewriteReview.objects.filter(status="rejected").exists()
    RewriteSettings.objects.filter(study=signals_study).update(signal_auto_reject=["mostly_pasted"])
    review_decide(response_id=ids["paster"][1], decision="accept", reviewer=None)  # a person decided: kept
    summary = review_autoflag(study=signals_study)
    assert summary["auto_rejected"] == 1
    review = RewriteReview.objects.get(response_id=ids["paster"][0])
    assert (review.status, review.reason, review.reviewer) == ("rejected", "other", None)
    assert review.reason_text.startswith("Rejected by the study's rule on writing signals: 100% of the text")
    assert RewriteReview.objects.get(response_id=ids["paster"][1]).status == "accepted"
    assert not Response.objects.get(pk=ids["paster"][0]).is_valid  # its slot reopened
    assert Reservation.objects.get(responses__pk=ids["paster"][0]).released
    assert not RewriteReview.objects.filter(response_id__in=ids["machine"], status="rejected").exists()


def reviewer_client() -> Client:
    user = User.objects.create_user("rev", password="x", is_staff=True)
    user.user_permissions.add(*Permission.objects.filter(codename__in=[
        "change_rewritereview", "view_rewritereview", "add_writingsignal", "view_writingsignal"]))
    client = Client()
    client.force_login(user)
    return client


def test_the_review_queue_shows_filters_and_sorts_by_the_signals():
    ids = crowd()
    review_autoflag(study=Study.objects.get(slug="sig"))
    rows = review_queue(study=Study.objects.get(slug="sig"))
    assert [r["response"] for r in rows] == sorted(r["response"] for r in rows)  # oldest first, as before
    by_id = {r["response"]: r for r in rows}
    assert by_id[ids["old_client"][0]]["telemetry"] == "none"
    assert by_id[ids["paster"][0]]["signal_flags"] == 2
    assert by_id[ids["paster"][0]]["signals"][0]["flagged"]  # flagged signals first
    flagged = {r["response"] for r in review_queue(study=Study.objects.get(slug="sig"), show="flagged")}
    assert flagged == {*ids["paster"], *ids["machine"], ids["copier"][0]}
    assert {r["response"] for r in review_queue(show="typing_speed")} == set(ids["machine"])
    assert {r["response"] for r in review_queue(show="no_telemetry")} == set(ids["old_client"])
    assert [r["response"] for r in review_queue(order="flags")][:2] == ids["paster"]
    by_speed = [r["response"] for r in review_queue(order="signal:typing_speed")]
    assert by_speed[:2] == sorted(ids["machine"]) or set(by_speed[:2]) == set(ids["machine"])
    with pytest.raises(ApplicationError, match="show must be one of"):
        review_queue(show="bogus")

    client = reviewer_client()
    page = client.get("/admin/annotation/rewritereview/queue/?study=sig&show=flagged&order=flags").content.decode()
    assert page.count('class="rq-row') == 5 and "most of the text pasted from outside the page" in page
    assert "typed faster than people sustain" in page and 'id="rq-compute"' in page
    page = client.get("/admin/annotation/rewritereview/queue/?study=sig&show=no_telemetry").content.decode()
    assert page.count('class="rq-row') == 2 and "no telemetry" in page
    assert "Show must be one of" in client.get("/admin/annotation/rewritereview/queue/?show=x").content.decode()


def test_the_queue_button_starts_the_measurement_as_a_job(django_capture_on_commit_callbacks):
    crowd()
    client = reviewer_client()
    response = client.post("/admin/annotation/rewritereview/queue/signals/", {"study": "sig"})
    assert response.status_code == 302 and response["Location"].endswith("?study=sig")
    job = Job.objects.get(kind="writing_signals")
    assert job.params["study"] == "sig" and job.params["language_model"] is None and job.queue == ""
    from annotation.celery_tasks import writing_signals_task

    writing_signals_task(job.pk)  # as the worker runs it
    job.refresh_from_db()
    assert job.status == "done" and job.result["flagged_rewrites"] == 5


def test_recommendations_and_decisions_carry_the_facts_in_neutral_words():
    ids = crowd()
    review_autoflag(study=Study.objects.get(slug="sig"))
    for response_id in [*ids["careful"], *ids["paster"]]:
        review_decide(response_id=response_id, decision="accept", reviewer=None)
    api = APIClient()
    api.force_authenticate(User.objects.create_superuser("boss", password="x"))
    recs = {r["participant"]: r for r in api.get("/api/v1/studies/sig/participants/").json()}
    assert recs["paster1"]["writing_signals"] == {"mostly_pasted": 2, "focus_loss_insert": 2}
    assert recs["paster1"]["recommendation"] == "approve"  # signals never decide payment; reviewers do
    assert ("wrote 2 of 2 rewrites with writing signals for review: most of the text pasted from outside the page "
            "(2), a long time away from the page, then a large insertion (2)") in recs["paster1"]["evidence"]
    assert recs["careful1"]["writing_signals"] == {} and recs["old1"]["no_telemetry"] == 2
    assert "sent 2 of 2 rewrites without writing telemetry" in recs["old1"]["evidence"]
    csv_text = decisions_serialize(study=Study.objects.get(slug="sig"))
    line = next(row for row in csv_text.splitlines() if row.startswith("paster1"))
    assert "most of the text pasted from outside the page (2)" in line and "approve" in line
    for word in ("cheat", "fraud", "bot", "AI"):
        assert word not in line


def test_the_corpus_can_leave_flagged_rewrites_out_and_its_card_says_so(tmp_path):
    from scoring.export.card.markdown import writing_signals_markdown
    from tasks.models import StyleComponent

    StyleComponent.objects.get_or_create(name="formality", defaults={"label_1": "informal", "label_2": "formal"})
    ids = crowd()
    for group in ("careful", "paster", "machine", "old_client", "copier"):
        for response_id in ids[group]:
            review_decide(response_id=response_id, decision="accept", reviewer=None)
    with pytest.raises(ApplicationError, match="have no writing signals yet"):
        corpus_build_from_rewrites(study_slug="sig", name="c0", component="formality", exclude_flagged="all")
    review_autoflag(study=Study.objects.get(slug="sig"))
    with pytest.raises(ApplicationError, match="unknown signal"):
        corpus_build_from_rewrites(study_slug="sig", name="c0", component="formality", exclude_flagged="pasty")
    kept = corpus_build_from_rewrites(study_slug="sig", name="all-kept", component="formality")
    assert kept.n_pairs == 10 and kept.import_params["excluded_flagged"] == 0
    corpus = corpus_build_from_rewrites(study_slug="sig", name="clean", component="formality",
                                        exclude_flagged="all")
    assert corpus.n_pairs == 5
    assert not {p.metadata["response"] for p in corpus.pairs.all()} & {*ids["paster"], *ids["machine"],
                                                                        ids["copier"][0]}
    signals = corpus.import_params["writing_signals"]
    assert signals["flagged"] == {"rewrites": 5, "accepted": 5, "rejected": 0, "pending": 0,
                                  "excluded_from_corpus": 5}
    assert signals["by_signal"]["typing_speed"]["excluded_from_corpus"] == 2
    only_speed = corpus_build_from_rewrites(study_slug="sig", name="no-fast", component="formality",
                                            exclude_flagged="typing_speed")
    assert only_speed.n_pairs == 8
    card = "\n".join(writing_signals_markdown(corpus.import_params))
    assert "Writing signals flagged 5 rewrite(s) (5 accepted, 0 rejected, 0 pending by the reviewers)" in card
    assert "5 accepted flagged rewrite(s) left out of this corpus" in card
    assert "typed faster than people sustain: 2 (2 accepted, 0 rejected, 0 pending, 2 left out)" in card
    assert "2 without" in card


def test_the_api_lists_the_signals_and_starts_their_measurement(django_capture_on_commit_callbacks):
    ids = crowd()
    api = APIClient()
    api.force_authenticate(User.objects.create_superuser("boss", password="x"))
    assert api.get("/api/v1/studies/sig/writing-signals/").json()[0]["signals"] == []
    response = api.post("/api/v1/studies/sig/writing-signals/",
                        {"thresholds": {"typing_speed": 40}, "auto_reject": ["typing_speed"]}, format="json")
    assert response.status_code == 202 and response.json()["job"]["kind"] == "writing_signals"
    settings = RewriteSettings.objects.get(study__slug="sig")
    assert settings.signal_thresholds == {"typing_speed": 40.0} and settings.signal_auto_reject == ["typing_speed"]
    from annotation.celery_tasks import writing_signals_task

    writing_signals_task(response.json()["job"]["id"])
    rows = {r["response"]: r for r in api.get("/api/v1/studies/sig/writing-signals/").json()}
    assert rows[ids["machine"][0]]["review"] == "rejected" and rows[ids["old_client"][0]]["telemetry"] == "none"
    assert any(s["signal"] == "typing_speed" and s["flagged"] for s in rows[ids["machine"][0]]["signals"])
    bad = api.post("/api/v1/studies/sig/writing-signals/", {"thresholds": {"typing_speed": -1}}, format="json")
    assert_api_error(bad, code="invalid", status=400)
    assert "typing_speed must be a number" in bad.json()["error"]["message"]
    outside = api.post("/api/v1/studies/sig/writing-signals/", {"language_model": "/etc"}, format="json")
    assert_api_error(outside, code="path_not_allowed", status=400)
    ordering = api.get("/api/v1/studies/nope/writing-signals/")
    assert_api_error(ordering, code="not_found", status=404)


def test_the_command_saves_the_thresholds_measures_and_prints_a_summary():
    crowd()
    out = StringIO()
    call_command("writing_signals", "--study", "sig", "--signal-threshold", "typing_speed=off", stdout=out,
                 stderr=StringIO())
    summary = json.loads(out.getvalue().strip().splitlines()[-1])
    assert summary["flagged"]["mostly_pasted"] == 2 and "typing_speed" in summary["off"]
    assert summary["auto_rejected"] == 0
    out = StringIO()
    with pytest.raises(Exception):  # noqa: B017 - CommandError, exit 1
        call_command("writing_signals", "--study", "sig", "--signal-threshold", "speed=3", stdout=out,
                     stderr=StringIO())
    error = json.loads(out.getvalue().strip().splitlines()[-1])
    assert error["ok"] is False and "unknown name 'speed'" in error["error"]["message"]
    assert "(--signal-threshold)" in error["error"]["message"]


def test_a_rewrite_study_takes_its_thresholds_and_rule_when_created():
    made = study("made", signal_thresholds={"mostly_pasted": 0.8}, signal_auto_reject=["typing_speed"])
    assert made.rewrite_settings.signal_thresholds == {"mostly_pasted": 0.8}
    assert made.rewrite_settings.signal_auto_reject == ["typing_speed"]
    with pytest.raises(ApplicationError, match="unknown signal"):
        study("bad", signal_auto_reject=["speed"])
    assert not Study.objects.filter(slug="bad").exists()


def test_the_periodic_refresh_measures_studies_with_new_rewrites_only():
    crowd()
    first = writing_signals_refresh()
    assert first == {"studies": [{"study": "sig", "flagged_rewrites": 5, "auto_rejected": 0}]}
    assert writing_signals_refresh() == {"studies": []}  # nothing new since


def test_similarity_to_the_models_own_rewrite_through_a_callable():
    ids = crowd()
    # Items are served in a random order: the model "wrote" exactly what the paster wrote for their first source.
    first = Response.objects.get(pk=ids["paster"][0]).study_item.payload["source"]
    model_texts = {first: TEXTS["paster"][0], ({SOURCE, OTHER} - {first}).pop(): "I will be late again."}
    calls: list[tuple[str, str]] = []

    def rewrite_of(source: str, target_style: str) -> str:
        calls.append((source, target_style))
        return model_texts[source]

    summary = writing_signals_compute(study=Study.objects.get(slug="sig"), model_rewriter=rewrite_of,
                                      model_name="test-model")
    assert sorted(calls) == sorted([(SOURCE, "formal"), (OTHER, "formal")])  # once per source
    assert summary["flagged"]["model_similarity"] == 1, summary
    row = WritingSignal.objects.get(response_id=ids["paster"][0], signal="model_similarity")
    assert row.flagged and row.score == 100 and "alike with test-model's own rewrite" in row.evidence
    # A later run without the model keeps what the model run found.
    writing_signals_compute(study=Study.objects.get(slug="sig"))
    assert WritingSignal.objects.filter(signal="model_similarity").count() == 10
