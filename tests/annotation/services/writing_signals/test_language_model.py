"""The LLM-likeness signal on a tiny randomly initialised GPT-2 built here (no download): the statistic against a
hand computation with the model, and the signal switched on by a configured local model, off without one."""
from __future__ import annotations

import math
from pathlib import Path

import pytest

from annotation.models import Study, WritingSignal
from annotation.services.writing_signals.language_model import llm_statistics
from annotation.services.writing_signals.services import writing_signals_compute
from core.errors import ApplicationError
from tests.annotation.services.writing_signals.test_services import crowd
from tests.scoring.metric_fixtures import tiny_gpt2_dir

pytestmark = pytest.mark.django_db


@pytest.fixture(scope="module")
def tiny_model_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tiny_gpt2_dir(tmp_path_factory.mktemp("writing-lm"))


def test_the_statistic_is_the_mean_surprisal_over_the_mean_entropy(tiny_model_dir: Path) -> None:
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    texts = ["thank you very much for your help", "are you coming tonight ?", "hey", "sure no problem"]
    stats = llm_statistics(texts, path=str(tiny_model_dir), batch_size=3)  # padded batches, sorted by length
    tokenizer = AutoTokenizer.from_pretrained(tiny_model_dir)
    model = AutoModelForCausalLM.from_pretrained(tiny_model_dir).eval()
    for text, got in zip(texts, stats, strict=True):
        ids = [tokenizer.eos_token_id, *tokenizer(text, add_special_tokens=False)["input_ids"]]
        with torch.no_grad():
            log_probs = torch.log_softmax(model(torch.tensor([ids])).logits[0, :-1], dim=-1)
        surprisal = [-float(log_probs[i, ids[i + 1]]) for i in range(len(ids) - 1)]
        entropy = [-float((log_probs[i].exp() * log_probs[i]).sum()) for i in range(len(ids) - 1)]
        want = (sum(surprisal) / len(surprisal), sum(entropy) / len(entropy))
        assert got is not None and math.isclose(got[0], want[0], rel_tol=1e-4) and math.isclose(got[1], want[1],
                                                                                                 rel_tol=1e-4)


def test_a_configured_model_switches_the_signal_on(tiny_model_dir: Path, settings) -> None:
    crowd()
    study = Study.objects.get(slug="sig")
    summary = writing_signals_compute(study=study)
    assert summary["off"]["llm_likeness"] == "no local language model configured"
    settings.STYLECROWD_WRITING_LM = str(tiny_model_dir)
    summary = writing_signals_compute(study=study)
    assert summary["off"]["llm_likeness"].startswith("not measured in this run")  # the periodic refresh's case
    RewriteSettings = study.rewrite_settings.__class__
    RewriteSettings.objects.filter(study=study).update(signal_thresholds={"llm_likeness": 10})  # everything flags
    summary = writing_signals_compute(study=study, language_model=str(tiny_model_dir))
    rows = WritingSignal.objects.filter(signal="llm_likeness")
    assert rows.count() == 10 and summary["flagged"]["llm_likeness"] == 10
    row = rows.first()
    assert f"under {tiny_model_dir.name}:" in row.evidence and row.details["model"] == tiny_model_dir.name
    assert math.isclose(row.score, row.details["log_perplexity"] / row.details["mean_entropy"], rel_tol=1e-3)
    writing_signals_compute(study=study)  # a run without the model keeps its rows
    assert WritingSignal.objects.filter(signal="llm_likeness").count() == 10


def test_a_model_directory_that_is_not_one_is_refused(tmp_path: Path) -> None:
    crowd()
    with pytest.raises(ApplicationError, match="not a local model directory"):
        writing_signals_compute(study=Study.objects.get(slug="sig"), language_model=str(tmp_path))

