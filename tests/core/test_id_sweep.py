"""The one sweep of raw ids (core/id_sweep.py): whole tokens only ("P1" never touches "P10"), the database's prefilter
keeping the same rule as Python's replacement, ids in JSON keys and values, keys cut to a column's max_length, a dry
run that writes nothing, rows_of restricting the rows, and mappings longer than one SQL chunk."""
from __future__ import annotations

import re

import pytest
from django.contrib.auth import get_user_model
from hypothesis import given
from hypothesis import strategies as st

from core import id_sweep
from core.id_sweep import ids_replace, replacer, sql_token_pattern, swept_models, text_columns, token_pattern
from core.models import ErasureTombstone, Job

KEY = "ps-0123456789abcdef0123"


def jobs_only(model):  # noqa: ANN001, ANN201
    return model._default_manager.all() if model is Job else None


def test_a_short_id_is_replaced_as_a_whole_token_only():
    replace = replacer({"P1": KEY})
    assert replace("P1") == KEY
    assert replace("P10 xP1 P1x 1P1") == "P10 xP1 P1x 1P1"
    # Punctuation, spaces, quotes and underscores around it still find it (CSV lines, file names, log text).
    assert replace("P1,0.50\nbonus_P1.csv 'P1' (P1) P1-b") == (
        f"{KEY},0.50\nbonus_{KEY}.csv '{KEY}' ({KEY}) {KEY}-b")


def test_of_two_ids_where_one_begins_the_other_the_longer_wins():
    replace = replacer({"P1": "k-short", "P1-b": "k-long"})
    assert replace("P1-b P1 P1-bc") == "k-long k-short k-short-bc"


def test_json_keys_and_values_are_replaced_and_other_values_kept():
    value = {"P1": ["P1", {"who": "P1", "n": 3, "ok": True, "none": None}], "P10": "P10", "count": 1.5}
    assert replacer({"P1": KEY})(value) == {
        KEY: [KEY, {"who": KEY, "n": 3, "ok": True, "none": None}], "P10": "P10", "count": 1.5}


@given(text=st.text(alphabet="P1_0a-, \"", max_size=12))
def test_the_database_pattern_selects_exactly_the_texts_python_rewrites(text):
    """PostgreSQL has no look-behind, so its pattern matches the neighbours too; on every text it must agree with
    Python's about whether the id is there (Python's `re` reads both patterns the same way here)."""
    ids = ["P1", "a-1"]
    assert bool(re.search(sql_token_pattern(ids), text)) == bool(token_pattern(ids).search(text))


@pytest.mark.django_db
def test_ids_replace_rewrites_text_and_json_columns_and_counts_rows():
    hit = Job.objects.create(kind="sync P1", params={"P1": ["P1", "P10"]}, result={"n": 1}, error="worker P1 left")
    near = Job.objects.create(kind="sync P10", params={"who": "xP1"}, error="P1x")

    changed = ids_replace(mapping={"P1": KEY}, rows_of=jobs_only, apply=True)

    assert changed == {"core.Job": 1}
    hit.refresh_from_db()
    assert (hit.kind, hit.params, hit.result, hit.error) == (
        f"sync {KEY}", {KEY: [KEY, "P10"]}, {"n": 1}, f"worker {KEY} left")
    near.refresh_from_db()
    assert (near.kind, near.params, near.error) == ("sync P10", {"who": "xP1"}, "P1x")


@pytest.mark.django_db
def test_a_key_longer_than_the_id_is_cut_to_the_columns_max_length():
    raw = "A1B2C3D4E5F6G"  # an MTurk-like id: shorter than a person key
    job = Job.objects.create(kind="k", queue=f"queue-for-{raw}", message=f"sent to {raw}")
    assert len(f"queue-for-{KEY}") > Job._meta.get_field("queue").max_length

    ids_replace(mapping={raw: KEY}, rows_of=jobs_only, apply=True)

    job.refresh_from_db()
    assert job.queue == f"queue-for-{KEY}"[:32]
    assert job.message == f"sent to {KEY}"  # room enough: not cut


@pytest.mark.django_db
def test_a_dry_run_counts_what_would_change_and_writes_nothing():
    job = Job.objects.create(kind="k", params={"worker": "P1"}, error="P1")
    before = Job.objects.values().get(pk=job.pk)

    assert ids_replace(mapping={"P1": KEY}, rows_of=jobs_only, apply=False) == {"core.Job": 1}
    assert Job.objects.values().get(pk=job.pk) == before
    assert ids_replace(mapping={}, apply=True) == {}


@pytest.mark.django_db
def test_rows_of_limits_the_rows_and_no_rows_of_means_every_row_of_every_model():
    kept, swept = Job.objects.create(kind="a P1"), Job.objects.create(kind="b P1")
    user = get_user_model().objects.create(username="P1", first_name="P1")

    assert ids_replace(mapping={"P1": KEY}, rows_of=lambda m: Job.objects.filter(pk=swept.pk) if m is Job else None,
                       apply=True) == {"core.Job": 1}
    assert Job.objects.get(pk=kept.pk).kind == "a P1"
    assert Job.objects.get(pk=swept.pk).kind == f"b {KEY}"

    changed = ids_replace(mapping={"P1": KEY}, apply=True)

    assert changed["core.Job"] == 1 and changed[get_user_model()._meta.label] == 1
    user.refresh_from_db()
    assert (user.username, user.first_name, Job.objects.get(pk=kept.pk).kind) == (KEY, KEY, f"a {KEY}")


@pytest.mark.django_db
def test_a_mapping_longer_than_one_sql_chunk_is_found_whole(monkeypatch):
    monkeypatch.setattr(id_sweep, "SQL_CHUNK", 7)
    mapping = {f"W{n:03d}": f"ps-{n:020x}" for n in range(30)}
    jobs = [Job.objects.create(kind=raw, params={"ids": [raw]}) for raw in mapping]

    assert ids_replace(mapping=mapping, rows_of=jobs_only, apply=True) == {"core.Job": 30}
    assert sorted(Job.objects.filter(pk__in=[j.pk for j in jobs]).values_list("kind", flat=True)) == sorted(
        mapping.values())


def test_the_registry_walk_covers_char_text_and_json_columns_with_choices_but_no_primary_key():
    assert {c.name for c in text_columns(Job)} >= {"kind", "status", "params", "error", "result", "task_args"}
    assert "id" not in {c.name for c in text_columns(Job)}
    models_swept = set(swept_models())
    assert {Job, ErasureTombstone, get_user_model()} <= models_swept
    assert not any(m._meta.proxy or not m._meta.managed for m in models_swept)
