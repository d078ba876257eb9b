"""annotation's eraser (annotation/services/erasure.py): slots of an open study go back and exactly k still holds;
a study's statistics after erasing a participant equal those of the same study played without them."""
from __future__ import annotations

from collections import Counter
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command
from django.utils import timezone
from rest_framework.test import APIClient

from annotation.models import Batch, Participant, Reservation, Response, Study, StudyItem
from annotation.selectors import items_over_capacity, reservation_expected_answer
from annotation.services import session_creation, sessions
from annotation.services.erasure import withdrawn_items_close
from core.erasure import ErasureTarget, participant_erase
from core.errors import ApplicationError
from core.models import ErasureTombstone
from scoring.agreement.stats.summary import agreement_compute
from tasks.models import InstanceStatus, TaskInstance
from tests import factories as f
from tests.annotation.helpers import Participant as Person
from tests.annotation.helpers import make_study, serving_path  # noqa: F401 (fixture)
from tests.annotation.services.test_engine_races import _play

pytestmark = pytest.mark.django_db


def _session(slug: str, pid: str) -> str:
    batch = session_creation.session_create(slug=slug, participant_id=pid, platform="prolific").batch
    sessions.session_consent(token=batch.token, agree=True)
    sessions.session_start(token=batch.token)
    return batch.token


def test_erasing_people_with_slots_in_an_open_study_gives_the_slots_back_and_exactly_k_holds():
    study = make_study(n_instances=2, per_batch=2, k=3)
    tokens = {f"A{n:012d}": _session(study.slug, f"A{n:012d}") for n in range(3)}
    assert _play(tokens["A000000000000"]) == 2  # one answered everything
    sessions.session_next(token=tokens["A000000000001"])  # one holds a live, unanswered reservation
    # every slot is held: a newcomer finds no work
    held = Reservation.objects.filter(study_item__study=study, released=False)
    assert held.count() == 2 * 3
    for pid in ("A000000000000", "A000000000001"):
        participant_erase(platform="prolific", external_id=pid, apply=True)
    assert Reservation.objects.filter(study_item__study=study, released=False).count() == 2 * 1
    assert not Participant.objects.filter(external_id__in=["A000000000000", "A000000000001"]).exists()
    assert study.items.filter(fill__gt=1).count() == 0  # the serving order was recounted
    _play(tokens["A000000000002"])
    for n in range(3, 8):
        try:
            _play(_session(study.slug, f"B{n:012d}"))
        except Exception:  # noqa: BLE001 (no work left: the study is full again)
            break
    per_item = Counter(Response.objects.filter(study=study, is_valid=True).values_list("study_item_id", flat=True))
    assert sorted(per_item.values()) == [3, 3]
    assert items_over_capacity(study=study) == []


def test_statistics_after_erasing_a_participant_equal_the_study_played_without_them():
    votes = [["S2-S1", "S1-S2", "S2-S1", "S2-S1"], ["S1-S2", "S1-S2", "S2-S1", "S1-S2"],
             ["S2-S1", "S2-S1", "S1-S2", "S2-S1"], ["S2-S1", "S1-S2", "S1-S2", "S1-S2"]]
    with_them, _ = f.annotated_study(answers=votes)
    Participant.objects.filter(study=with_them, external_id="p1").update(external_id="ERASEME0000000")
    without = f.annotated_study(answers=[[v for n, v in enumerate(row) if n != 1] for row in votes],
                                study=f.StudyFactory(item_kind=with_them.item_kind))[0]
    participant_erase(platform="prolific", external_id="ERASEME0000000", apply=True)
    after, after_items = agreement_compute(study=Study.objects.get(pk=with_them.pk), resamples=0)
    expected, expected_items = agreement_compute(study=without, resamples=0)
    # ids of rows differ between the two studies; every statistic must not
    drop = {"study", "slug", "computed_at", "participants", "irregular"}
    assert {k: v for k, v in after.items() if k not in drop} == {k: v for k, v in expected.items() if k not in drop}
    assert len(after_items) == len(expected_items)
    assert [p["answers"] for p in after["participants"]] == [p["answers"] for p in expected["participants"]]
    assert after["irregular"]["n_over_k"] == expected["irregular"]["n_over_k"]


def _writer_pair_instances(study: Study, writer: str) -> list[int]:
    """Mark the study's first instance as built from `writer`'s rewrite; its id."""
    from tasks.models import ParallelPair

    item = study.items.order_by("position").first()
    instance = item.instance
    pair = ParallelPair.objects.create(corpus=instance.corpus, position=99, source_id="w#1", text_1="src",
                                       text_2=instance.sentence_1,
                                       metadata={"writer": {"participant": writer, "platform": "prolific"}})
    type(instance).objects.filter(pk=instance.pk).update(sentence_pair=pair)
    return [instance.pk]


def test_items_on_withdrawn_instances_are_closed_taken_out_of_batches_and_never_served_or_drawn_again():
    from annotation.services.studies import instances_select

    study = make_study(n_instances=2, per_batch=2, k=3)
    # the writer took part too (in another study), so they are a person with data to erase
    other = make_study(n_instances=1, per_batch=1, k=1, slug="writers")
    _play(_session(other.slug, "WRITER0000000"))
    withdrawn = _writer_pair_instances(study, "WRITER0000000")
    holder = _session(study.slug, "H000000000000")  # holds both items, answers none yet
    summary = participant_erase(platform="prolific", external_id="WRITER0000000", apply=True)
    showing = StudyItem.objects.filter(instance_id=withdrawn[0])  # both studies drew it
    assert summary["tables"]["annotation.StudyItem (closed: withdrawn)"] == showing.count() == 2
    assert all(showing.values_list("is_closed", flat=True))
    assert summary["tables"]["annotation.Reservation (removed from batches: withdrawn, unanswered)"] == 1
    assert study.pk in summary["studies"]
    assert TaskInstance.objects.get(pk=withdrawn[0]).status == InstanceStatus.WITHDRAWN
    item = study.items.get(instance_id=withdrawn[0])
    assert item.is_closed
    # the holder's copy of it (and its text) is out of their batch, which is one item shorter
    assert not Reservation.objects.filter(study_item=item).exists()
    assert Batch.objects.get(token=holder).n_items == 1
    # newcomers are served only the other item, and a recount does not reopen the withdrawn one
    served = set()
    for n in range(2):  # the holder keeps one slot of the other item: two newcomers fill it
        token = _session(study.slug, f"N{n:012d}")
        batch, reservation, _ = sessions.session_next(token=token)
        served.add(reservation.study_item_id)
        assert sessions.session_next(token=token)[1].study_item_id == reservation.study_item_id
    assert served == {study.items.exclude(pk=item.pk).get().pk}
    with pytest.raises(Exception, match="no more items"):
        _session(study.slug, "N999999999999")
    from annotation.services.adaptive import item_refresh_closed

    item.refresh_from_db()
    assert item_refresh_closed(item=item) is True
    # a new study never draws it, whatever status was asked for
    assert withdrawn[0] not in {i.pk for i in instances_select(setup=item.instance.setup, status=None)}
    assert holder


def _withdraw(instance_id: int) -> dict[str, int]:
    """The tasks eraser's outcome for one instance, then annotation's `withdrawn_items_close` (its counts)."""
    TaskInstance.objects.filter(pk=instance_id).update(status=InstanceStatus.WITHDRAWN)
    target = ErasureTarget(platform="prolific", external_id="W000000000000", person_key="pk", now=timezone.now())
    return withdrawn_items_close(target).counts


@pytest.mark.usefixtures("serving_path")
def test_a_holder_is_not_served_a_withdrawn_item_its_text_goes_and_their_batch_still_completes():
    study = make_study(n_instances=3, per_batch=3, k=2)
    person = Person(APIClient(), study.slug, "H000000000001")
    person.start()
    person.consent()
    first = person.next().json()
    assert first["progress"] == {"done": 0, "total": 3}
    posted = person.answer(first["item"]["id"], reservation_expected_answer(public_id=first["item"]["id"]))
    assert posted.status_code == 201, posted.content
    on_screen = posted.json()["next"]["item"]  # the page shows it now, and it is withdrawn under it
    withdrawn = Reservation.objects.select_related("study_item__instance").get(public_id=on_screen["id"])
    text = withdrawn.study_item.instance.anchor_1
    assert text in str(withdrawn.shown)

    counts = _withdraw(withdrawn.study_item.instance_id)
    assert counts["annotation.Reservation (removed from batches: withdrawn, unanswered)"] == 1
    batch = Batch.objects.get(token=person.token)
    assert batch.n_items == 2
    assert not any(text in str(shown) + str(item) for shown, item in
                   Reservation.objects.values_list("shown", "public_item"))
    # answering what was on screen is refused as not reserved (not as an expired session) ...
    refused = person.answer(on_screen["id"], reservation_expected_answer(public_id=first["item"]["id"]))
    assert refused.status_code == 404, refused.content
    # ... and `next` skips it: the batch's last item, then the completion code
    body = person.next().json()
    assert body["item"]["id"] not in (first["item"]["id"], on_screen["id"])
    assert body["progress"] == {"done": 1, "total": 2}
    last = person.answer(body["item"]["id"], reservation_expected_answer(public_id=body["item"]["id"]))
    assert last.status_code == 201, last.content
    ended = person.next().json()
    assert ended["item"] is None and ended["completion_code"] == "DONE123"
    assert ended["progress"] == {"done": 2, "total": 2}
    batch.refresh_from_db()
    assert batch.state == Batch.State.COMPLETED and batch.finished_at is not None
    # the withdrawn item's slot is not held, and its item stays closed
    assert withdrawn.study_item.reservations.count() == 0
    assert StudyItem.objects.get(pk=withdrawn.study_item_id).is_closed


@pytest.mark.usefixtures("serving_path")
def test_a_batch_whose_only_unanswered_item_is_withdrawn_completes_on_its_next_request():
    study = make_study(n_instances=2, per_batch=2, k=2)
    person = Person(APIClient(), study.slug, "H000000000002")
    person.start()
    person.consent()
    first = person.next().json()
    posted = person.answer(first["item"]["id"], reservation_expected_answer(public_id=first["item"]["id"]))
    last = Reservation.objects.get(public_id=posted.json()["next"]["item"]["id"])
    _withdraw(last.study_item.instance_id)
    ended = person.next().json()
    assert ended["item"] is None and ended["completion_code"] == "DONE123"
    assert ended["progress"] == {"done": 1, "total": 1}
    assert Batch.objects.get(token=person.token).state == Batch.State.COMPLETED


# --- imported annotators with the person's id ----------------------------------------------------------------------

IMPORTED_ID = "5f0c1e2d3b4a5968778a9b1e"  # a Prolific-like id (made up)


def _import_long(tmp_path: Path, slug: str, rows: str) -> None:
    path = tmp_path / f"{slug}.csv"
    path.write_text("item,annotator,value\n" + rows, encoding="utf-8")
    call_command("import_annotations", "--study", slug, "--question", "order", "--scale", "S1-S2,S2-S1", str(path),
                 stdout=StringIO(), stderr=StringIO())


def test_a_platform_erasure_also_erases_the_imported_annotators_with_the_same_id_and_says_how_many(tmp_path):
    f.ParticipantFactory(external_id=IMPORTED_ID)  # the same person on Prolific, in a study of ours
    _import_long(tmp_path, "ext", f"i1,{IMPORTED_ID},S1-S2\ni2,{IMPORTED_ID},S2-S1\ni1,w0,S1-S2\ni2,w0,S1-S2\n")
    imported = Participant.objects.get(platform="imported", external_id=IMPORTED_ID)
    dry = participant_erase(platform="prolific", external_id=IMPORTED_ID, apply=False)
    assert dry["imported"] == {"participants": 1, "ratings": 2}
    assert dry["tables"]["annotation.Participant"] == 2 and dry["tables"]["annotation.Response"] == 2
    assert imported.study_id in dry["studies"]
    assert Response.objects.filter(participant=imported).count() == 2  # a dry run changes nothing
    done = participant_erase(platform="prolific", external_id=IMPORTED_ID, apply=True)
    assert done["imported"] == dry["imported"]
    assert not Participant.objects.filter(external_id=IMPORTED_ID).exists()
    assert list(Response.objects.filter(study__slug="ext").values_list("participant__external_id", flat=True)
                ) == ["w0", "w0"]  # the other annotator keeps their ratings


def test_platform_imported_erases_only_imported_annotators_and_is_refused_for_a_platform_persons_id(tmp_path):
    _import_long(tmp_path, "ext", f"i1,{IMPORTED_ID},S1-S2\ni1,w0,S2-S1\n")
    prolific = f.ParticipantFactory(external_id=IMPORTED_ID, platform="prolific")
    with pytest.raises(ApplicationError) as refused:  # the sweep would hide the Prolific person's id from erasure
        participant_erase(platform="imported", external_id=IMPORTED_ID, apply=True)
    assert refused.value.code == "invalid" and "erase with platform prolific" in refused.value.message
    assert IMPORTED_ID not in refused.value.message
    assert Participant.objects.filter(external_id=IMPORTED_ID).count() == 2 and not ErasureTombstone.objects.exists()
    prolific.delete()
    summary = participant_erase(platform="imported", external_id=IMPORTED_ID, apply=True)
    assert summary["imported"] == {"participants": 1, "ratings": 1}
    assert summary["tables"]["annotation.Participant"] == 1
    assert not Participant.objects.filter(external_id=IMPORTED_ID).exists()
    assert list(Participant.objects.filter(study__slug="ext").values_list("external_id", flat=True)) == ["w0"]
    assert ErasureTombstone.objects.get().platform == "imported"
    target = ErasureTarget(platform="imported", external_id="x", person_key="k", now=timezone.now())
    assert target.participant_platforms == ("imported",)
    assert ErasureTarget(platform="mturk", external_id="x", person_key="k", now=timezone.now()
                         ).participant_platforms == ("mturk", "imported")
