"""Private screening questions for real studies: the TSV import (STEL's format), duplicates to edit, the admin."""
from __future__ import annotations

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from core.errors import ApplicationError
from tasks.models import ScreeningQuestion, StyleComponent
from tasks.services.screening import screening_questions_duplicate, screening_questions_import

pytestmark = pytest.mark.django_db

HEADER = "style type\tCorrect Order\tAnchor 1\tAnchor 2\tAlternative 1.1\tAlternative 1.2"
GOOD = (
    f"{HEADER}\tsetups\n"
    "formality\tS1-S2\tI would be grateful for your help.\tpls help me\tIt is a pleasure to meet you.\t"
    "nice 2 meet u\t\n"
    "contraction\tS2-S1\tI do not know.\tI don't know.\tWe're late.\tWe are late.\tquadruple,triple\n"
)


def test_stels_own_tsv_imports_as_private_copies(shared_data):
    StyleComponent.objects.create(name="shakespeare", label_1="modern", label_2="shakespearean")
    text = (shared_data / "stel" / "screening_questions.tsv").read_text(encoding="utf-8")
    created = screening_questions_import(text=text, where="screening_questions.tsv", prefix="lab", active=False)
    assert len(created) == 10
    assert created[0].name == "lab-formality-1" and created[2].name == "lab-simplicity-1"
    assert created[0].sentence_2 == "It\u2019s cause ya got no sense." and not created[0].active
    assert created[0].source == "imported from screening_questions.tsv"


def test_import_parses_setups_and_numbers_after_existing_names():
    first = screening_questions_import(text=GOOD, where="a.tsv")
    second = screening_questions_import(text=GOOD, where="b.tsv")
    assert [q.name for q in first + second] == ["private-formality-1", "private-contraction-1",
                                                 "private-formality-2", "private-contraction-2"]
    assert first[0].setups == [] and first[1].setups == ["quadruple", "triple"]
    assert first[1].correct_order == "S2-S1" and first[1].fits("triple") and not first[1].fits("style-or-content")


def test_import_records_the_questions_language_and_refuses_a_bad_tag():
    french = screening_questions_import(text=GOOD, where="fr.tsv", prefix="lab-fr", language="fr")
    assert {q.language for q in french} == {"fr"}
    assert {q.language for q in screening_questions_import(text=GOOD, where="en.tsv")} == {"en"}
    copies = screening_questions_duplicate(questions=ScreeningQuestion.objects.filter(name__startswith="lab-fr-"))
    assert {q.language for q in copies} == {"fr"}
    with pytest.raises(ApplicationError, match="language 'French': give a BCP 47 tag"):
        screening_questions_import(text=GOOD, where="x.tsv", prefix="bad", language="French")
    assert not ScreeningQuestion.objects.filter(name__startswith="bad-").exists()


@pytest.mark.parametrize(("text", "message"), [
    ("", "a.tsv: empty file"),
    ("component\torder\n", "a.tsv: line 1: expected the header"),
    (f"{HEADER}\n", "a.tsv: no questions below the header"),
    (f"{HEADER}\nformality\tS1-S2\ta\tb\tc\td\nsarcasm\tS1-S2\ta\tb\tc\td\n", "a.tsv: line 3: unknown style type"),
    (f"{HEADER}\nformality\t1\ta\tb\tc\td\n", "a.tsv: line 2: Correct Order must be S1-S2 or S2-S1"),
    (f"{HEADER}\nformality\tS1-S2\ta\t\tc\td\n", "a.tsv: line 2: every sentence"),
    (f"{HEADER}\nformality\tS1-S2\ta\tb\tc\n", "a.tsv: line 2: expected 6 or 7"),
    (f"{HEADER}\tsetups\nformality\tS1-S2\ta\tb\tc\td\tquintuple\n", "a.tsv: line 2: unknown setup"),
])
def test_bad_files_name_the_line_and_store_nothing(text, message):
    with pytest.raises(ApplicationError) as exc:
        screening_questions_import(text=text, where="a.tsv")
    assert message in exc.value.message
    assert not ScreeningQuestion.objects.exists()


def test_duplicates_are_inactive_copies_to_edit():
    originals = screening_questions_import(text=GOOD, where="a.tsv")
    copies = screening_questions_duplicate(questions=ScreeningQuestion.objects.filter(pk=originals[1].pk))
    assert len(copies) == 1 and copies[0].name == "private-contraction-2" and not copies[0].active
    assert copies[0].anchor_1 == originals[1].anchor_1 and copies[0].setups == ["quadruple", "triple"]
    assert "copy of private-contraction-1" in copies[0].source


def test_admin_warns_imports_and_duplicates(admin_client):
    page = admin_client.get("/admin/tasks/screeningquestion/").content.decode()
    assert "have public answers" in page and "/admin/tasks/screeningquestion/import/" in page
    upload = SimpleUploadedFile("mine.tsv", GOOD.encode("utf-8"), content_type="text/tab-separated-values")
    r = admin_client.post("/admin/tasks/screeningquestion/import/",
                          {"file": upload, "prefix": "mine", "source": "our lab", "active": "on"})
    assert r.status_code == 302
    assert set(ScreeningQuestion.objects.values_list("name", "source", "active", "language")) == {
        ("mine-formality-1", "our lab", True, "en"), ("mine-contraction-1", "our lab", True, "en")}
    bad = SimpleUploadedFile("bad.tsv", f"{HEADER}\nsarcasm\tS1-S2\ta\tb\tc\td\n".encode(), content_type="text/plain")
    r = admin_client.post("/admin/tasks/screeningquestion/import/", {"file": bad, "prefix": "mine"})
    assert r.status_code == 200 and "bad.tsv: line 2: unknown style type" in r.content.decode()
    assert ScreeningQuestion.objects.count() == 2
    selected = list(ScreeningQuestion.objects.values_list("pk", flat=True))
    r = admin_client.post("/admin/tasks/screeningquestion/",
                          {"action": "duplicate_as_private", "_selected_action": selected})
    assert r.status_code == 302 and ScreeningQuestion.objects.filter(active=False).count() == 2
    # the add form explains the fields and checks the setups
    add = admin_client.get("/admin/tasks/screeningquestion/add/").content.decode()
    assert "shown only in quadruples" in add and "S1-S2 when S1 has the style of A1" in add
    german = SimpleUploadedFile("de.tsv", GOOD.encode("utf-8"), content_type="text/tab-separated-values")
    admin_client.post("/admin/tasks/screeningquestion/import/", {"file": german, "prefix": "de", "language": "de"})
    assert set(ScreeningQuestion.objects.filter(name__startswith="de-").values_list("language", flat=True)) == {"de"}
