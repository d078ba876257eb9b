"""study_items_source_check: a Likert/ranking study's items come from exactly one source; a rewrite study's
language is the one given."""
from __future__ import annotations

import json
from io import StringIO

import pytest
from django.core.management import call_command

from annotation.models import Study
from annotation.services.study_build import study_items_source_check
from core.errors import ApplicationError


def test_one_source_is_accepted_and_two_are_refused_naming_the_second():
    study_items_source_check(items="items.jsonl", outputs=None, outputs_study=None)
    with pytest.raises(ApplicationError) as refused:
        study_items_source_check(items="items.jsonl", outputs="outputs.tsv", outputs_study=None)
    assert refused.value.field == "outputs"


@pytest.mark.django_db
def test_a_rewrite_study_given_a_language_writes_and_counts_in_it(tmp_path) -> None:
    """`create_study --language fr` on a file of sources: the study's language is the one given, so its default
    eligibility question, persona questions, instructions and items are French (issue 33), not the sources' default."""
    sources = tmp_path / "sources.txt"
    sources.write_text("salut tu viens demain au boulot ou pas\nje sais pas trop ce que tu veux dire par là\n")
    out = StringIO()
    call_command("create_study", "--slug", "rw-fr-cli", "--kind", "rewrite", "--sources", str(sources), "--language",
                 "fr", "--persona", "gender", "--min-words", "0", stdout=out, stderr=StringIO())
    assert json.loads(out.getvalue().strip().splitlines()[-1])["items"] == 2
    study = Study.objects.get(slug="rw-fr-cli")
    native, gender = study.eligibility_questions
    assert study.language == "fr" and native["name"] == "native_fr" and native["accept"] == ["oui"]
    assert gender["text"] == "Votre genre ?" and gender["choice_labels"]["female"] == "femme"
    assert study.task_description.startswith("Réécrivez chaque phrase")
    assert {item.payload["language"] for item in study.items.all()} == {"fr"}
