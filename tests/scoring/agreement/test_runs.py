"""Agreement statistics: published worked examples through import → compute, and constructed studies."""
from __future__ import annotations

import csv
import io
import json
import math
from pathlib import Path

import numpy as np
import pytest
from django.core.management import call_command
from statsmodels.stats.inter_rater import fleiss_kappa

from annotation.models import Participant, Response
from scoring.agreement.runs import agreement_run_compute, agreement_run_start
from scoring.agreement.stats.summary import agreement_compute
from scoring.models import AgreementRun
from tests.factories import annotated_study

pytestmark = pytest.mark.django_db

# Fleiss (1971), Table 1: 10 subjects (patients) × 5 diagnostic categories, 14 psychiatrists each.
FLEISS_1971 = [
    [0, 0, 0, 0, 14], [0, 2, 6, 4, 2], [0, 0, 3, 5, 6], [0, 3, 9, 2, 0], [2, 2, 8, 1, 1],
    [7, 7, 0, 0, 0], [3, 2, 6, 3, 0], [2, 5, 3, 2, 2], [6, 5, 2, 1, 0], [0, 2, 2, 3, 7],
]

# Krippendorff's reliability-data example as documented by the `krippendorff` package (coders × units).
NAN = math.nan
KRIPPENDORFF_DOC = [
    [NAN, NAN, NAN, NAN, NAN, 3, 4, 1, 2, 1, 1, 3, 3, NAN, 3],
    [1, NAN, 2, 1, 3, 3, 4, 3, NAN, NAN, NAN, NAN, NAN, NAN, NAN],
    [NAN, NAN, 2, 1, 3, 4, 4, NAN, 2, 1, 1, 3, 3, NAN, 4],
]
# The package's second documented example (ordinal 0.815 with value_domain 1..5).
KRIPPENDORFF_ORDINAL = [
    [1, 2, 3, 3, 2, 1, 4, 1, 2, NAN, NAN, NAN],
    [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, NAN, 3],
    [NAN, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, NAN],
    [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, NAN],
]


def run_command(*args: str) -> dict:
    out = io.StringIO()
    call_command(*args, stdout=out)
    return json.loads(out.getvalue().strip().splitlines()[-1])


def write_long_csv(path: Path, rows: list[tuple]) -> Path:
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["item", "annotator", "value"])
        writer.writerows(rows)
    return path


def reliability_to_long(matrix: list[list[float]]) -> list[tuple]:
    """Long format, unit by unit (the order an export from a survey tool has), skipping missing values."""
    rows = []
    for unit in range(len(matrix[0])):
        for coder, ratings in enumerate(matrix):
            if not math.isnan(ratings[unit]):
                rows.append((f"unit-{unit + 1}", f"coder-{coder + 1}", int(ratings[unit])))
    return rows


def test_fleiss_1971_through_import_and_compute(tmp_path: Path) -> None:
    rows = []
    for subject, counts in enumerate(FLEISS_1971):
        rater = 0
        for category, n in enumerate(counts):
            for _ in range(n):
                rater += 1
                rows.append((f"patient-{subject + 1}", f"psychiatrist-{rater}", category + 1))
    path = write_long_csv(tmp_path / "fleiss1971.csv", rows)
    imported = run_command("import_annotations", "--study", "fleiss-1971", "--question", "diagnosis",
                           "--scale", "1-5", "--level", "nominal", str(path))
    assert imported["responses"] == 140 and imported["annotators_per_item"] == 14

    summary = run_command("compute_agreement", "--study", "fleiss-1971", "--json")
    assert summary["fleiss_kappa"] == pytest.approx(0.2099, abs=5e-4)  # Fleiss (1971): kappa = .21
    assert summary["fleiss_kappa"] == pytest.approx(fleiss_kappa(np.array(FLEISS_1971)), abs=1e-12)
    assert summary["n_items"] == 10 and summary["n_annotators"] == 14 and summary["n_annotations"] == 140
    assert summary["level"] == "nominal"
    ci = summary["fleiss_kappa_ci"]
    assert ci["low"] < summary["fleiss_kappa"] < ci["high"] and ci["resamples"] == 1000
    assert AgreementRun.objects.get(pk=summary["agreement_run"]).is_computed


@pytest.mark.parametrize(("level", "expected"), [("nominal", 0.691358), ("interval", 0.810845)])
def test_krippendorff_documented_example(tmp_path: Path, level: str, expected: float) -> None:
    path = write_long_csv(tmp_path / "reliability.csv", reliability_to_long(KRIPPENDORFF_DOC))
    run_command("import_annotations", "--study", "kd", "--question", "code", "--scale", "1-4", "--level", level,
                str(path))
    summary = run_command("compute_agreement", "--study", "kd", "--level", level, "--json")
    assert round(summary["krippendorff_alpha"], 6) == expected
    assert summary["level"] == level
    # Unit 2 and unit 14 have no rating at all, unit 1 only one: 12 units are pairable.
    assert summary["alpha_units"] == 12 and summary["n_items"] == 13


def test_krippendorff_ordinal_with_explicit_domain(tmp_path: Path) -> None:
    path = write_long_csv(tmp_path / "ordinal.csv", reliability_to_long(KRIPPENDORFF_ORDINAL))
    run_command("import_annotations", "--study", "kd-ord", "--question", "q", "--scale", "1-5", str(path))
    summary = run_command("compute_agreement", "--study", "kd-ord", "--json")
    assert summary["level"] == "ordinal"  # the default for a numeric scale
    assert round(summary["krippendorff_alpha"], 3) == 0.815
    assert summary["value_domain"] == [1, 2, 3, 4, 5]


def test_ordering_study_votes_majority_and_categories() -> None:
    # correct answer S2-S1 everywhere; 4 items, 5 raters
    answers = [
        ["S2-S1"] * 5,                                    # 5 correct
        ["S2-S1", "S2-S1", "S2-S1", "S1-S2", "S1-S2"],    # 3 correct: borderline, validated
        ["S2-S1", "S2-S1", "S1-S2", "S1-S2", "S1-S2"],    # 2 correct: rejected
        ["S1-S2"] * 4 + ["S2-S1"],                        # 1 correct: rejected
    ]
    study, items = annotated_study(answers=answers)
    summary, per_item = agreement_compute(study=study, seed=1, resamples=200)
    by_item = per_item.set_index("item_id")
    assert by_item.loc[items[0].pk, "n_correct"] == 5 and by_item.loc[items[0].pk, "decision"] == "validated"
    assert bool(by_item.loc[items[1].pk, "borderline"]) and by_item.loc[items[1].pk, "majority_answer"] == "S2-S1"
    assert by_item.loc[items[2].pk, "decision"] == "rejected"
    assert by_item.loc[items[3].pk, "majority_answer"] == "S1-S2"
    assert summary["majority_accuracy"] == pytest.approx(0.5)
    assert summary["n_validated"] == 2 and summary["n_rejected"] == 2 and summary["n_borderline"] == 1
    assert summary["votes_distribution"] == {"0": 0, "1": 1, "2": 1, "3": 1, "4": 0, "5": 1}
    # The categories are the orders chosen, as STEL computed kappa, not correct/incorrect.
    assert summary["fleiss_categories"] == ["S1-S2", "S2-S1"]
    expected = fleiss_kappa(np.array([[0, 5], [2, 3], [3, 2], [4, 1]]))
    assert summary["fleiss_kappa"] == pytest.approx(expected)
    assert summary["components"]["formality"]["fleiss_kappa"] == pytest.approx(expected)
    assert summary["setups"]["quadruple"]["n_items"] == 4


def test_orders_versus_correctness_coding_differ() -> None:
    """STEL's remark: kappa over the orders chosen is not kappa over correct/incorrect. With correct orders
    alternating between items, raters who always pick the right order agree perfectly under both codings, but a
    rater pool that mostly picks S1-S2 regardless of the instance agrees on orders and not on correctness."""
    study_a, _ = annotated_study(answers=[["S1-S2"] * 4 + ["S2-S1"]] * 6, correct_order="S1-S2")
    annotated_study(answers=[["S1-S2"] * 4 + ["S2-S1"]] * 6, correct_order="S2-S1", study=study_a, start=1000)
    summary, per_item = agreement_compute(study=study_a, resamples=0)
    orders = np.array([[4, 1]] * 12)
    correctness = np.array([[4, 1]] * 6 + [[1, 4]] * 6)  # correct/incorrect counts per item
    assert summary["fleiss_kappa"] == pytest.approx(fleiss_kappa(orders))
    assert summary["fleiss_kappa"] != pytest.approx(fleiss_kappa(correctness))


def test_irregular_data_first_k_in_time_order_and_incomplete() -> None:
    answers = [
        ["S2-S1", "S2-S1", "S2-S1", "S1-S2", "S1-S2", "S1-S2", "S1-S2"],  # 7 responses: only the first 5 count
        ["S2-S1", "S2-S1", "S2-S1"],                                        # 3 of 5: incomplete
    ]
    study, items = annotated_study(answers=answers)
    summary, per_item = agreement_compute(study=study, resamples=0)
    by_item = per_item.set_index("item_id")
    assert by_item.loc[items[0].pk, "n_correct"] == 3 and by_item.loc[items[0].pk, "decision"] == "validated"
    assert by_item.loc[items[1].pk, "decision"] == "incomplete"
    irregular = summary["irregular"]
    assert irregular["n_over_k"] == 1 and irregular["n_ignored_responses"] == 2 and irregular["n_incomplete"] == 1
    assert any("first 5 in time order" in note for note in irregular["notes"])
    assert any("incomplete" in note for note in irregular["notes"])
    assert summary["fleiss_items"] == 1 and summary["n_incomplete"] == 1


def test_excluded_participants_are_not_counted() -> None:
    study, items = annotated_study(answers=[["S2-S1"] * 5 + ["S1-S2"]])
    # p0 failed screening: their responses become invalid, so the 6th response (S1-S2) moves into the first 5.
    Response.objects.filter(participant__external_id="p0").update(is_valid=False)
    Participant.objects.filter(external_id="p0").update(excluded=True)
    summary, per_item = agreement_compute(study=study, resamples=0)
    assert int(per_item.loc[0, "n_correct"]) == 4
    participants = {p["external_id"]: p for p in summary["participants"]}
    assert participants["p0"]["excluded"] is True and participants["p0"]["valid_answers"] == 0
    assert summary["n_excluded_participants"] == 1


def test_per_participant_statistics() -> None:
    answers = [["S2-S1", "S1-S2", "S2-S1"], ["S2-S1", "S1-S2", "S1-S2"]]
    study, items = annotated_study(answers=answers)
    study.annotators_per_item, study.min_correct = 3, 2
    study.save()
    screening_person = Participant.objects.get(study=study, external_id="p1")
    from tests.factories import ScreeningQuestionFactory

    question = ScreeningQuestionFactory()
    from django.utils import timezone

    Response.objects.create(study=study, participant=screening_person, screening_question=question, answer="S2-S1",
                            is_screening=True, is_correct=True, answered_at=timezone.now())
    summary, _ = agreement_compute(study=study, resamples=0)
    stats = {p["external_id"]: p for p in summary["participants"]}
    assert stats["p0"]["accuracy"] == 1.0 and stats["p1"]["accuracy"] == 0.0 and stats["p2"]["accuracy"] == 0.5
    # majorities: item 1 → S2-S1, item 2 → S1-S2
    assert stats["p0"]["majority_agreement"] == 0.5 and stats["p2"]["majority_agreement"] == 1.0
    assert stats["p1"]["screening_accuracy"] == 1.0 and stats["p1"]["screening_answers"] == 1
    assert stats["p2"]["median_seconds"] == 7.0 and stats["p0"]["answers"] == 2


def test_triple_versus_quadruple_tables() -> None:
    """Table 2b and Table 4 on a constructed study: families f0…f9, each annotated as triple and quadruple."""
    families = [f"f{i}" for i in range(10)]
    right_q, wrong_q = ["S2-S1"] * 4 + ["S1-S2"], ["S1-S2"] * 4 + ["S2-S1"]
    right_t, wrong_t = ["S2"] * 4 + ["S1"], ["S1"] * 4 + ["S2"]
    # quadruple right on f0-f6, triple right on f0-f3 and f7-f8
    quad = [right_q if i < 7 else wrong_q for i in range(10)]
    triple = [right_t if i < 4 or i in (7, 8) else wrong_t for i in range(10)]
    study, _ = annotated_study(answers=quad, families=families)
    study.allow_multiple_setups = True
    study.save()
    annotated_study(answers=triple, families=families, setup="triple", study=study, start=5000)
    summary, _ = agreement_compute(study=study, resamples=0)
    table = summary["triple_vs_quadruple"]
    assert table["n_instances"] == 10
    assert table["counts"] == {"triple_correct_quadruple_correct": 4, "triple_correct_quadruple_wrong": 2,
                               "triple_wrong_quadruple_correct": 3, "triple_wrong_quadruple_wrong": 1}
    assert table["shares"]["triple_correct_quadruple_correct"] == pytest.approx(0.4)
    assert table["triple_accuracy_where_quadruple_correct"] == pytest.approx(4 / 7)
    assert table["quadruple_accuracy_where_triple_correct"] == pytest.approx(4 / 6)
    assert summary["setups"]["triple"]["majority_accuracy"] == pytest.approx(0.6)
    assert summary["setups"]["quadruple"]["majority_accuracy"] == pytest.approx(0.7)


def test_bootstrap_is_seeded_and_stored_results_are_stable() -> None:
    rng = np.random.default_rng(3)
    answers = [["S2-S1" if rng.random() < 0.75 else "S1-S2" for _ in range(5)] for _ in range(40)]
    study, _ = annotated_study(answers=answers)
    first = agreement_run_compute(run_id=agreement_run_start(study=study, seed=7, resamples=300, enqueue=False).pk)
    second = agreement_run_compute(run_id=agreement_run_start(study=study, seed=7, resamples=300, enqueue=False).pk)
    other = agreement_run_compute(run_id=agreement_run_start(study=study, seed=8, resamples=300, enqueue=False).pk)
    assert first.result == second.result
    assert first.result["fleiss_kappa_ci"] != other.result["fleiss_kappa_ci"]
    ci = first.result["krippendorff_alpha_ci"]
    assert ci["low"] <= first.result["krippendorff_alpha"] <= ci["high"] and ci["resamples"] == 300
    assert Path(first.items_path).exists()


def test_compute_agreement_errors() -> None:
    from django.core.management.base import CommandError

    with pytest.raises(CommandError, match="does not exist"):
        call_command("compute_agreement", "--study", "nope", stdout=io.StringIO())
    study, _ = annotated_study(answers=[["S2-S1"] * 5])
    out = io.StringIO()
    with pytest.raises(CommandError, match="nominal"):
        call_command("compute_agreement", "--study", study.slug, "--level", "interval", stdout=out)
    assert json.loads(out.getvalue().strip().splitlines()[-1])["ok"] is False
    with pytest.raises(CommandError, match="no items of component"):
        call_command("compute_agreement", "--study", study.slug, "--component", "simplicity", stdout=io.StringIO())


def test_api_queues_runs_and_reports_errors(django_capture_on_commit_callbacks, admin_user) -> None:  # noqa: ANN001
    from rest_framework.test import APIClient

    study, _ = annotated_study(answers=[["S2-S1"] * 5, ["S1-S2"] * 5])
    client = APIClient()
    assert client.post("/api/v1/agreement-runs/", {"study": study.slug}, format="json").status_code in (401, 403)
    client.force_authenticate(admin_user)
    bad = client.post("/api/v1/agreement-runs/", {"study": study.slug, "level": "interval"}, format="json")
    assert bad.status_code == 400 and "nominal" in bad.json()["error"]["message"]
    missing = client.post("/api/v1/agreement-runs/", {"study": "nope"}, format="json")
    assert missing.status_code == 404
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        queued = client.post("/api/v1/agreement-runs/", {"study": study.slug, "seed": 2, "resamples": 50},
                             format="json")
    assert queued.status_code == 202 and len(callbacks) == 1
    body = queued.json()
    assert body["computed"] is False and body["job"]["status"] == "created"
    agreement_run_compute(run_id=body["agreement_run"])  # what the worker does
    done = client.get(f"/api/v1/agreement-runs/{body['agreement_run']}/").json()
    assert done["computed"] is True and done["result"]["n_items"] == 2 and "participants" not in done["result"]
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        queued = client.post("/api/v1/filter-runs/", {"study": study.slug, "balance": True, "seed": 1},
                             format="json")
    assert queued.status_code == 202 and len(callbacks) == 1
    # every API that queues a job answers the same 202 shape: the job's status row under "job"
    job_keys = set(client.get(f"/api/v1/jobs/{body['job']['id']}/").json())
    assert set(queued.json()) == {"job"} and set(queued.json()["job"]) == job_keys == set(body["job"])
    assert queued.json()["job"]["kind"] == "filter_instances" and queued.json()["job"]["status"] == "created"
    schema = client.get("/api/schema/", {"format": "json"}).json()
    assert {"/api/v1/agreement-runs/", "/api/v1/agreement-runs/{run_id}/", "/api/v1/filter-runs/"} <= set(
        schema["paths"])


def test_binary_reader_matches_the_orm_and_survives_separator_clash() -> None:
    from annotation.models import StudyItem
    from scoring.agreement import selectors

    study, items = annotated_study(answers=[["S2-S1", "S1-S2", "S2-S1"], ["S1-S2"] * 3])
    Response.objects.filter(participant__external_id="p1").update(is_valid=False, value=2.5)
    frame = selectors.responses_frame(study_id=study.pk).sort_values("response_id").reset_index(drop=True)
    expected = list(Response.objects.filter(study=study).order_by("id").values_list(
        "id", "study_item_id", "participant_id", "answer", "is_valid", "is_correct", "value", "seconds"))
    got = list(zip(frame["response_id"], frame["item_id"], frame["participant_id"], frame["answer"],
                   frame["is_valid"], frame["is_correct"], frame["value"], frame["seconds"], strict=True))
    for want, have in zip(expected, got, strict=True):
        assert want[:5] == tuple(have[:5]) and float(want[5]) == have[5] and want[7] == have[7]
        assert (want[6] is None and math.isnan(have[6])) or want[6] == have[6]
    first = Response.objects.filter(study=study).order_by("id").first()
    assert frame.loc[0, "answered_at"] == pytest.approx(first.answered_at.timestamp())
    # an id holding the separator the fast path joins texts with: the reader falls back to row reads
    StudyItem.objects.filter(pk=items[0].pk).update(external_id="odd\x1fid")
    read = selectors.items_frame(study_id=study.pk)
    assert read["external_id"].tolist() == ["odd\x1fid", items[1].external_id]
    assert read["component"].tolist() == ["formality", "formality"] and read["setup"].tolist() == ["quadruple"] * 2


def test_count_table_is_what_aggregate_raters_builds() -> None:
    """The subjects × categories table comes from one bincount; statsmodels' aggregate_raters on the items × k
    answer codes must give the very same table (so kappa is computed on statsmodels' own input)."""
    from scoring.agreement import selectors
    from scoring.agreement.stats.fleiss import fleiss_table, fleiss_table_from_codes
    from scoring.agreement.stats.votes import first_k_responses, votes_compute

    rng = np.random.default_rng(9)
    answers = [[str(rng.choice(["S1-S2", "S2-S1"])) for _ in range(5)] for _ in range(25)]
    study, _ = annotated_study(answers=answers)
    first_k = first_k_responses(responses=selectors.responses_frame(study_id=study.pk), k=5)
    data = votes_compute(first_k=first_k, items=selectors.items_frame(study_id=study.pk), k=5, m=3)
    table, used = fleiss_table(counts=data.counts, rows=data.per_item["complete"].to_numpy())
    codes = np.array([[data.categories.index(a) for a in row] for row in answers])
    assert np.array_equal(table, fleiss_table_from_codes(codes, len(data.categories)))


def test_distinct_rows_matches_numpy_unique() -> None:
    from hypothesis import given, settings
    from hypothesis import strategies as st
    from hypothesis.extra.numpy import arrays

    from scoring.agreement.stats.bootstrap import distinct_rows

    @settings(max_examples=80, deadline=None)
    @given(arrays(np.int64, st.tuples(st.integers(1, 60), st.integers(1, 6)), elements=st.integers(0, 40)))
    def check(table: np.ndarray) -> None:
        rows, counts = distinct_rows(table)
        expected_rows, expected_counts = np.unique(table, axis=0, return_counts=True)
        assert sorted(zip(map(tuple, rows), counts, strict=True)) == sorted(
            zip(map(tuple, expected_rows), expected_counts, strict=True))
        assert counts.sum() == table.shape[0]

    check()
