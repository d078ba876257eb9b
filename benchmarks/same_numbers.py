"""The benchmark's figures on STEL's own published files, printed as one sorted JSON document: run it before and after
a refactoring and compare the two outputs (`diff`), they must be equal.

What it runs, through the commands a researcher uses: both published STEL files imported (`import_corpus --format
stel`), their style-or-content variants generated, every corpus audited for leaks (`audit_instances`), a study of
the 200 quadruples (k = 5, m = 3) answered by 230 seeded simulated participants (some items get more than k answers,
some fewer), agreement (`compute_agreement`), the filter with both surplus rules (`filter_instances`), the validated
STEL TSV export (`export_benchmark`, its bytes hashed), and the five simple methods scored on the published files
(`score_stel`, with the agreement of each method's predictions with STEL's published predictions).

Everything runs in one transaction that is rolled back, so the database is left as it was:

    DJANGO_SETTINGS_MODULE=config.settings.test DATABASE_URL=postgres://postgres@127.0.0.1:5432/sc_mine \
        .venv/bin/python benchmarks/same_numbers.py > before.json
"""
from __future__ import annotations

import csv
import datetime as dt
import hashlib
import io
import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.test")
STEL = ROOT.parent / "shared" / "data" / "stel"
if not STEL.is_dir():
    STEL = Path("/work/shared/data/stel")
FILES = {"contraction": STEL / "quad_questions_char_contraction.tsv",
         "nbr_substitution": STEL / "quad_questions_char_substitution.tsv"}
METHODS = "levenshtein,char3gram,punctuation,word_length,uppercase"
PUBLISHED_COLUMNS = {"levenshtein": "LevenshteinSimilarity", "char3gram": "CharacterThreeGramSimilarity",
                     "punctuation": "PunctuationSimilarity", "word_length": "WordLengthSimilarity",
                     "uppercase": "UppercaseSimilarity"}
# Keys whose values change from run to run (row ids, clocks, paths), dropped from the figures.
VOLATILE = {"id", "job", "agreement_run", "filter_run", "export", "export_id", "corpus_id", "study_id", "seconds",
            "elapsed_seconds", "created_at", "finished_at", "started_at", "out", "path", "paths", "files", "timeline",
            "timings", "version", "predictions", "completion_code", "screened_out_code", "generation_run_id",
            "participant_url", "url", "study_url", "version_id", "digest", "card", "croissant", "progress"}


def command(*args: str) -> dict[str, Any]:
    from django.core.management import call_command

    out = io.StringIO()
    call_command(*args, stdout=out, stderr=io.StringIO())
    return json.loads(out.getvalue().strip().splitlines()[-1])


def stable(value: Any) -> Any:
    if isinstance(value, dict):
        return {str(k): stable(v) for k, v in value.items() if str(k) not in VOLATILE}
    if isinstance(value, list | tuple):
        return [stable(v) for v in value]
    if isinstance(value, float):
        return round(value, 10)
    return value


def simulate(slug: str, seed: int) -> dict[str, int]:
    """Seeded answers: item i is answered by 3 to 7 participants, each right with probability p_i."""
    from annotation.models import Participant, Response, Study, StudyItem

    study = Study.objects.get(slug=slug)
    items = list(StudyItem.objects.filter(study=study, instance__isnull=False).order_by("position", "pk"))
    rng = np.random.default_rng(seed)
    people = [Participant.objects.create(study=study, platform="anonymous", external_id=f"sim-{i}")
              for i in range(230)]
    base = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)
    responses = []
    for index, item in enumerate(items):
        n = int(rng.choice([3, 5, 5, 5, 5, 6, 7]))
        p = float(rng.beta(4, 1.2))
        who = rng.choice(len(people), size=n, replace=False)
        for rank, person in enumerate(who):
            right = bool(rng.random() < p)
            wrong = "S1-S2" if item.correct_answer == "S2-S1" else "S2-S1"
            answer = item.correct_answer if right else wrong
            responses.append(Response(study=study, participant=people[int(person)], study_item=item, answer=answer,
                                      is_correct=answer == item.correct_answer, seconds=4.0 + rank,
                                      answered_at=base + dt.timedelta(seconds=index * 20 + rank)))
    Response.objects.bulk_create(responses)
    return {"items": len(items), "responses": len(responses)}


def published_agreement(predictions: Path) -> dict[str, dict[str, float]]:
    """Per method: the share of instances where our prediction equals STEL's published one."""
    ours = {}
    with predictions.open(encoding="utf-8", newline="") as handle:
        for row in csv.DictReader(handle, delimiter="\t"):
            ours[(row.get("method") or row.get("Method"), row.get("ID") or row.get("id"))] = row
    published = list(csv.DictReader((STEL / "published_predictions_characteristics.tsv").open(encoding="utf-8"),
                                    delimiter="\t"))
    out: dict[str, dict[str, float]] = {}
    header = next(iter(ours.values())) if ours else {}
    pred_key = next((k for k in header if k.lower() in {"prediction", "predicted"}), None)
    for method, column in PUBLISHED_COLUMNS.items():
        same = total = 0
        for row in published:
            mine = ours.get((method, row["ID"]))
            if mine is None or pred_key is None:
                continue
            total += 1
            same += int(str(mine[pred_key]) == row[column])
        out[method] = {"compared": total, "same": same}
    return out


def main() -> None:
    import django

    django.setup()
    from django.core.management import call_command
    from django.db import transaction

    call_command("migrate", "--noinput", verbosity=0)
    figures: dict[str, Any] = {}

    class Rollback(Exception):
        pass

    with tempfile.TemporaryDirectory() as tmp:
        try:
            with transaction.atomic():
                for component, path in FILES.items():
                    name = f"same-{component}"
                    figures[f"import:{component}"] = command("import_corpus", "--name", name, "--format", "stel",
                                                             str(path))
                    figures[f"generate:{component}:style-or-content"] = command(
                        "generate_instances", "--corpus", name, "--setup", "style-or-content", "--seed", "1")
                    figures[f"audit:{component}"] = command("audit_instances", "--corpus", name, "--json")
                figures["create_study"] = command(
                    "create_study", "--slug", "same-numbers", "--setup", "quadruple", "--corpus", "same-contraction",
                    "--corpus", "same-nbr_substitution", "--seed", "1", "--annotators-per-item", "5",
                    "--screening-per-batch", "0", "--eligibility", "none", "--allow-anonymous")
                figures["simulate"] = simulate("same-numbers", seed=7)
                figures["agreement"] = command("compute_agreement", "--study", "same-numbers", "--seed", "1",
                                               "--json")
                figures["filter:stel"] = command("filter_instances", "--study", "same-numbers", "--min-correct",
                                                 "3", "--surplus", "stel", "--seed", "1")
                figures["filter:first"] = command("filter_instances", "--study", "same-numbers", "--min-correct",
                                                  "3", "--seed", "1")
                out = Path(tmp) / "validated.tsv"
                figures["export"] = command("export_benchmark", "--format", "stel-tsv", "--status", "validated",
                                            "--study", "same-numbers", "--out", str(out))
                figures["export:sha256"] = hashlib.sha256(out.read_bytes()).hexdigest()
                figures["score:exported"] = command("score_stel", str(out), "--methods", METHODS, "--json")
                predictions = Path(tmp) / "predictions.tsv"
                figures["score:published"] = command("score_stel", *map(str, FILES.values()), "--methods", METHODS,
                                                     "--predictions", str(predictions), "--json")
                figures["score:published:predictions_sha256"] = hashlib.sha256(predictions.read_bytes()).hexdigest()
                figures["score:published:vs_stel"] = published_agreement(predictions)
                raise Rollback
        except Rollback:
            pass
    print(json.dumps({name: stable(value) for name, value in figures.items()}, indent=1, sort_keys=True, default=str))


if __name__ == "__main__":
    main()
