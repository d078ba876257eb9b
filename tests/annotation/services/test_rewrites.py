"""Rewrite studies: sources from real files and corpora through GYAFC's filters into a study of
k rewrites per source; copy detection, length limits and the persona questionnaire over the JSON API."""
from __future__ import annotations

import json
from io import StringIO
from pathlib import Path
from typing import Any

import pytest
from django.core.management import CommandError, call_command
from rest_framework.test import APIClient

from annotation.models import Participant, RewriteSettings, Study
from annotation.services.rewrites import rewrite_check, sources_filter
from core.languages import is_question, word_count
from tests.annotation.helpers import Participant as Person
from tests.annotation.helpers import (
    serving_path,  # noqa: F401 - a fixture
    settings_pop,
)
from tests.factories import CorpusFactory, ParallelPairFactory

pytestmark = pytest.mark.django_db


def create(*args: str) -> dict[str, Any]:
    out = StringIO()
    call_command("create_study", *args, stdout=out, stderr=StringIO())
    return json.loads(out.getvalue().strip().splitlines()[-1])


def test_real_sources_filtered_as_gyafc_with_counts(shared_data: Path) -> None:
    path = shared_data / "stel" / "nsubs_sentences.txt"
    lines = [line for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    summary = create("--slug", "nsubs", "--kind", "rewrite", "--sources", str(path), "--target-style", "formal",
                     "--annotators-per-item", "2", "--eligibility", "none")
    assert summary["sources_read"] == len(lines) == 100
    dropped = summary["dropped"]
    # Every script's question marks: one of these leetspeak questions ends with an inverted `¿`.
    ascii_questions = sum(1 for line in lines if "?" in line)
    assert dropped["question"] == sum(1 for line in lines if is_question(line)) > ascii_questions
    assert dropped["too_short"] > 0 and dropped["too_long"] > 0
    assert summary["sources_kept"] == summary["items"] == 100 - sum(dropped.values())
    study = Study.objects.get(slug="nsubs")
    for item in study.items.all():
        words = word_count(item.payload["source"])
        assert not is_question(item.payload["source"]) and 5 <= words <= 25 and item.payload["target_style"] == "formal"
    assert "formal" in study.task_description and "Examples:" in study.task_description
    assert RewriteSettings.objects.get(study=study).filters["dropped"] == dropped
    # The filters are configurable: without the question filter and the length limits, more sources stay.
    loose = create("--slug", "nsubs-all", "--kind", "rewrite", "--sources", str(path), "--no-filter-questions",
                   "--min-words", "0", "--max-words", "0", "--eligibility", "none")
    assert loose["dropped"]["question"] == loose["dropped"]["too_short"] == 0 and loose["items"] > summary["items"]


def test_filters_drop_urls_and_repeats() -> None:
    kept, dropped = sources_filter(sources=[("1", "see http://x.org for the details on this one"),
                                            ("2", "this one is fine and long enough"),
                                            ("3", "this  one is fine and long enough"), ("4", "")], filters={})
    assert kept == [("2", "this one is fine and long enough")]
    assert dropped == {"empty": 1, "duplicate": 1, "question": 0, "url": 1, "too_short": 0, "too_long": 0}


def test_sources_from_csv_jsonl_and_corpus_side(tmp_path: Path, shared_data: Path) -> None:
    csv_file = tmp_path / "s.csv"
    csv_file.write_text("id,text\na,this is the first source sentence here\nb,this is the second source sentence\n")
    assert create("--slug", "csv", "--kind", "rewrite", "--sources", str(csv_file), "--eligibility", "none")[
        "items"] == 2
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": "a", "text": "this is the first source sentence"}\n{"text": "no id"}\n')
    out = StringIO()
    with pytest.raises(CommandError):
        call_command("create_study", "--slug", "bad", "--kind", "rewrite", "--sources", str(bad), stdout=out,
                     stderr=StringIO())
    assert "line 2" in out.getvalue() and not Study.objects.filter(slug="bad").exists()
    call_command("import_corpus", "--name", "nsubs-corpus", "--component", "nbr_substitution", "--format",
                 "aligned", str(shared_data / "stel" / "nsubs_translated_sentences.txt"),
                 str(shared_data / "stel" / "nsubs_sentences.txt"), stdout=StringIO(), stderr=StringIO())
    side_2 = create("--slug", "side2", "--kind", "rewrite", "--sources-corpus", "nsubs-corpus", "--side", "2",
                    "--eligibility", "none", "--no-filter-questions", "--min-words", "0", "--max-words", "0")
    first = Study.objects.get(slug="side2").items.get(external_id="1")
    assert side_2["sources_read"] == 100 and first.payload["source"] == "<3 friends 4ever"
    out = StringIO()
    with pytest.raises(CommandError):
        call_command("create_study", "--slug", "x", "--kind", "rewrite", "--sources-corpus", "nsubs-corpus",
                     stdout=out, stderr=StringIO())
    assert "--side" in out.getvalue()


def _study(**extra: Any) -> Study:
    from annotation.services.rewrites import rewrite_study_create
    study, _ = rewrite_study_create(
        slug="rw", sources=[(f"s{i}", f"hey u free on day {i} for the thing lol") for i in range(4)],
        target_style="formal", min_length=10, max_length=80, eligibility_questions=[],
        settings=settings_pop(extra, annotators_per_item=2, items_per_batch=4, max_batches=1), **extra)
    return study


@pytest.mark.usefixtures("serving_path")  # the PostgreSQL hot path and the general path refuse alike
def test_copy_refused_length_limits_and_persona_stored() -> None:
    _study(persona=["gender", "age"])
    person = Person(APIClient(), "rw", "w1")
    person.start()
    body = person.consent()
    assert body["state"] == "eligibility"
    names = [q["name"] for q in body["study"]["eligibility_questions"]]
    assert names == ["gender", "age"]
    answered = person.client.post(f"/api/v1/sessions/{person.token}/eligibility/",
                                  {"answers": {"gender": "female", "age": "25-34"}}, format="json")
    assert answered.status_code == 200 and answered.json()["state"] == "instructions"
    assert Participant.objects.get(external_id="w1").persona == {"gender": "female", "age": "25-34"}
    item = person.next().json()["item"]
    assert item["max_length"] == 80 and item["copy_threshold"] == 90.0 and item["min_length"] == 10
    source = item["texts"]["source"]
    copied = person.answer(item["id"], source.upper() + "!")  # nearly identical: refused
    assert copied.status_code == 400
    error = copied.json()["error"]
    assert error["code"] == "invalid" and "identical" in error["message"] and error["details"]["answer"]
    too_long = person.answer(item["id"], "Are you available " + "very " * 20 + "soon?")
    assert too_long.status_code == 400 and "at most 80" in too_long.json()["error"]["message"]
    too_short = person.answer(item["id"], "Free?")
    assert too_short.status_code == 400 and "at least 10" in too_short.json()["error"]["message"]
    good = person.answer(item["id"], "Are you available for the event on that day?")
    assert good.status_code == 201


def test_persona_questions_configurable(tmp_path: Path) -> None:
    own = tmp_path / "persona.json"
    own.write_text(json.dumps([{"name": "region", "text": "Where do you live?", "choices": ["north", "south"]}]))
    lines = tmp_path / "s.txt"
    lines.write_text("this is the first source sentence here\n")
    create("--slug", "own", "--kind", "rewrite", "--sources", str(lines), "--persona", str(own), "--eligibility",
           "none", "--min-words", "0")
    assert Study.objects.get(slug="own").eligibility_questions == [
        {"name": "region", "text": "Where do you live?", "choices": ["north", "south"], "persona": True}]
    create("--slug", "all", "--kind", "rewrite", "--sources", str(lines), "--persona", "pastel", "--eligibility",
           "none", "--min-words", "0", "--special-category-consent", "I agree to be asked my ethnicity and politics.")
    assert [q["name"] for q in Study.objects.get(slug="all").eligibility_questions] == [
        "gender", "age", "ethnicity", "country", "education", "political_orientation"]
    out = StringIO()
    with pytest.raises(CommandError):
        call_command("create_study", "--slug", "bad", "--kind", "rewrite", "--sources", str(lines), "--persona",
                     "shoe_size", "--min-words", "0", stdout=out, stderr=StringIO())
    assert "shoe_size" in out.getvalue() and not Study.objects.filter(slug="bad").exists()


# --- languages without spaces, every script's question marks (issue 33) ------------------------------------------

JAPANESE = "私は毎日電車で会社に行きます。"  # "I go to the office by train every day": one "word" for str.split()
THAI = "ฉันชอบกินข้าวผัดมากที่สุดในโลก"  # "I like fried rice most in the world": no spaces either


def test_word_limits_count_japanese_and_thai_words():
    rows = [("ja", JAPANESE), ("th", THAI), ("th-long", THAI * 4), ("ja-short", "東京です。")]
    kept, dropped = sources_filter(sources=rows, filters={"min_words": 5, "max_words": 25}, language="ja")
    assert [source_id for source_id, _ in kept] == ["ja", "th"]
    assert dropped["too_long"] == 1 and dropped["too_short"] == 1
    kept_th, _ = sources_filter(sources=[("th", THAI)], filters={"min_words": 9, "max_words": 9}, language="th")
    assert kept_th == [("th", THAI)]  # ฉัน ชอบ กิน ข้าว ผัด มาก ที่สุด ใน โลก: nine words


@pytest.mark.parametrize(("language", "text"), [
    ("en", "Is this the right way to say it?"), ("zh", "你今天晚上想去哪里吃饭？"), ("ar", "هل تريد أن تأتي معنا غدا؟"),
    ("el", "Θέλεις να έρθεις μαζί μας αύριο;"), ("hy", "Ուզու՞մ ես վաղը գալ մեզ հետ"),
    ("am", "ነገ ከእኛ ጋር መምጣት ትፈልጋለህ፧"), ("es", "¿Quieres venir con nosotros mañana por la tarde"),
])
def test_questions_are_dropped_in_every_script(language: str, text: str):
    kept, dropped = sources_filter(sources=[("q", text)], filters={"min_words": 0, "max_words": 0},
                                   language=language)
    assert kept == [] and dropped["question"] == 1


def test_a_greek_semicolon_is_a_question_only_in_greek():
    text = "Il pleut ; nous restons à la maison ce soir"
    kept, _ = sources_filter(sources=[("fr", text)], filters={"min_words": 0, "max_words": 0}, language="fr")
    assert kept == [("fr", text)]


def test_a_study_from_a_japanese_corpus_counts_japanese_words_and_asks_in_japanese_terms():
    corpus = CorpusFactory(name="ja-corpus", language="ja")
    ParallelPairFactory(corpus=corpus, text_1=JAPANESE, text_2="毎日、電車で会社へ通っております。")
    ParallelPairFactory(corpus=corpus, text_1="明日は来ますか？", text_2="明日はいらっしゃいますか？")
    summary = create("--slug", "ja-rewrite", "--kind", "rewrite", "--sources-corpus", "ja-corpus", "--side", "1",
                     "--target-style", "formal", "--annotators-per-item", "2")
    assert summary["sources_kept"] == 1 and summary["dropped"]["question"] == 1
    study = Study.objects.get(slug="ja-rewrite")
    assert study.items.get().payload["language"] == "ja"
    assert study.eligibility_questions[0]["text"] == "Is Japanese (日本語) your native language?"


def test_length_limits_count_what_people_see_as_characters():
    shown = {"max_length": 5, "language": "hi", "texts": {"source": ""}}
    assert rewrite_check(shown=shown, text="नमस्ते") is None  # 6 code points; a vowel sign joins its consonant
    assert "at most 5 characters, got 6" in (rewrite_check(shown=shown, text="e\u0301" * 6) or "")


# --- the persona questionnaire in the study's language (issue 33) ------------------------------------------------


def _persona_study(slug: str, language: str) -> Study:
    from annotation.services.rewrites import rewrite_study_create
    study, _ = rewrite_study_create(
        slug=slug, sources=[("s1", "salut tu viens demain au boulot ou pas")], target_style="soutenu",
        eligibility_questions=[], filters={"min_words": 0}, persona=["age", "gender", "country"], language=language,
        settings=settings_pop({}, annotators_per_item=1, items_per_batch=1, max_batches=1))
    return study


def test_a_french_study_asks_its_persona_in_french_and_stores_the_stable_values(client: Any) -> None:
    study = _persona_study("rw-fr", "fr")
    questions = {q["name"]: q for q in study.eligibility_questions}
    assert [questions[n]["text"] for n in ("age", "gender", "country")] == [
        "Votre âge ?", "Votre genre ?", "Le pays où vous vivez ?"]
    # The values are the English ones of every study; the labels are French, the countries in French order.
    assert questions["gender"]["choices"] == ["female", "male", "non-binary", "prefer not to say"]
    assert questions["gender"]["choice_labels"] == {"female": "femme", "male": "homme", "non-binary": "non binaire",
                                                    "prefer not to say": "je préfère ne pas répondre"}
    assert "choice_labels" not in questions["age"] or not questions["age"]["choice_labels"]
    country = questions["country"]
    assert country["choice_labels"]["Germany"] == "Allemagne" and country["choice_labels"]["Jordan"] == "Jordanie"
    labels = [country["choice_labels"].get(value, value) for value in country["choices"]]
    assert labels.index("Allemagne") < labels.index("Autriche") < labels.index("Belgique")  # French collation
    assert country["choices"].index("Germany") < country["choices"].index("Austria")  # not the English order
    # The page shows the French labels and posts the English values.
    html = client.get("/s/rw-fr/?PROLIFIC_PID=p1&STUDY_ID=S&SESSION_ID=p1").content.decode()
    assert "Votre genre ?" in html and "Your gender?" not in html
    assert '<input type="radio" name="elig-gender" value="female" required>' in html
    assert "<span>femme</span>" in html and "<span>female</span>" not in html
    assert '<option value="Germany">Allemagne</option>' in html
    # The API gives the values and their labels; a label is not an answer, the value is, and is stored as it is.
    person = Person(APIClient(), "rw-fr", "p2")
    person.start()
    asked = {q["name"]: q for q in person.consent()["study"]["eligibility_questions"]}
    assert asked["gender"]["choice_labels"]["female"] == "femme" and "female" in asked["gender"]["choices"]
    url = f"/api/v1/sessions/{person.token}/eligibility/"
    refused = person.client.post(url, {"answers": {"age": "25-34", "gender": "femme", "country": "Jordanie"}},
                                 format="json")
    assert refused.status_code == 400 and set(refused.json()["error"]["details"]) == {"gender", "country"}
    # in French, naming the questions as the page does, never the English values it does not show
    assert refused.json()["error"]["message"] == ("Veuillez répondre à ces questions en choisissant l'une des "
                                                  "réponses proposées : Votre genre ?; Le pays où vous vivez ?")
    answered = person.client.post(url, {"answers": {"age": "25-34", "gender": "female", "country": "Jordan"}},
                                  format="json")
    assert answered.status_code == 200 and answered.json()["state"] == "instructions"
    assert Participant.objects.get(external_id="p2").persona == {"age": "25-34", "gender": "female",
                                                                 "country": "Jordan"}


def test_an_arabic_study_names_the_countries_in_arabic() -> None:
    country = next(q for q in _persona_study("rw-ar", "ar").eligibility_questions if q["name"] == "country")
    assert country["text"] == "البلد الذي تعيش فيه؟"
    assert country["choice_labels"]["Jordan"] == "الأردن" and country["choice_labels"]["Egypt"] == "مصر"
    assert country["choices"][-1] == "prefer not to say" and country["choice_labels"]["prefer not to say"] == (
        "أفضّل عدم الإجابة")


def test_an_english_study_keeps_its_persona_questions_as_they_were() -> None:
    from annotation.services.persona_questions import PERSONA_QUESTIONS
    questions = _persona_study("rw-en", "en").eligibility_questions
    assert questions == [{"name": name, "persona": True, **PERSONA_QUESTIONS[name]}
                         for name in ("age", "gender", "country")]
    assert questions[1]["text"] == "Your gender?" and all("choice_labels" not in q for q in questions)


def test_every_persona_question_is_translated_in_every_shipped_language() -> None:
    """Every word choice has a label msgid, so it is in every catalog (the catalog test checks each is translated);
    each question's text and most labels read otherwise than the English (a `centre` may stay `centre`)."""
    from annotation.services.persona_questions import (
        CHOICE_LABELS,
        ETHNICITY_LISTS,
        PERSONA_QUESTIONS,
        persona_question,
    )
    # Ethnicity is asked in another language than English with Prolific's list (PASTEL's is the US census's).
    offered = {name: {**q, "choices": ETHNICITY_LISTS["prolific"]} if name == "ethnicity" else q
               for name, q in PERSONA_QUESTIONS.items()}
    worded = {c for name, q in offered.items() if name not in ("age", "country") for c in q["choices"]}
    assert worded <= set(CHOICE_LABELS)
    for language in ("fr", "de", "es", "it", "pt-BR", "ar"):
        for name, english in offered.items():
            question = persona_question(name, language=language, choices=english["choices"])
            assert question["text"] != english["text"], (language, name)
            assert sorted(question["choices"]) == sorted(english["choices"])  # the same values, in any order
            if name != "age":  # the age brackets read the same in every language
                assert len(question["choice_labels"]) > len(question["choices"]) / 2, (language, name)


def test_the_default_examples_are_written_in_the_study_language() -> None:
    from annotation.services.rewrites import DEFAULT_EXAMPLES, rewrite_study_create
    made = {}
    for language in ("fr", "en"):
        made[language], _ = rewrite_study_create(
            slug=f"rw-ex-{language}", sources=[("s1", "salut tu viens demain au boulot ou pas")], target_style="formal",
            eligibility_questions=[], filters={"min_words": 0}, language=language,
            settings=settings_pop({}, annotators_per_item=1, items_per_batch=1, max_batches=1))
    french = made["fr"].rewrite_settings.examples
    assert french[0] == {"source": "j'dirais que c'est punk quand même.",
                         "rewrite": "Je crois néanmoins qu'il s'agit de punk.",
                         "note": "Des mots complets, des majuscules et de la ponctuation ; l'opinion est conservée."}
    text = made["fr"].task_description
    assert "Original : faut voir les 2 côtés de l'histoire mdr\nRéécriture :" in text
    assert "i'd say" not in text and "lol" not in text
    assert made["en"].rewrite_settings.examples == DEFAULT_EXAMPLES["formal"]
    assert "Original: i'd say it is punk though." in made["en"].task_description
