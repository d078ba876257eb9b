"""The local back-end: a tiny randomly initialised causal LM and its tokenizer, built and saved here, loaded through
the path a real model directory takes (AutoTokenizer/AutoModelForCausalLM, local files only), choosing by the
log-likelihood of each choice."""
from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from core.model_backends import ChoiceQuestion, ReplyStatus, backend_create
from scoring.models import ModelAnswer, ModelRun
from tests import factories as f

pytestmark = [pytest.mark.django_db, pytest.mark.model]

VOCAB = "S1 S2 - > T1 T2 T3 1 2 3 4 5 A1 A2 Answer : . , which sentence style anchor matches goes with".split()


def save_tiny_causal_lm(path: Path, seed: int = 0) -> Path:
    import torch
    from tokenizers import Tokenizer, models, pre_tokenizers, trainers
    from transformers import GPT2Config, GPT2LMHeadModel, PreTrainedTokenizerFast

    tokenizer = Tokenizer(models.WordLevel(unk_token="[UNK]"))
    tokenizer.pre_tokenizer = pre_tokenizers.Whitespace()
    tokenizer.train_from_iterator([" ".join(VOCAB)] * 3, trainer=trainers.WordLevelTrainer(
        special_tokens=["[PAD]", "[UNK]", "[EOS]"]))
    fast = PreTrainedTokenizerFast(tokenizer_object=tokenizer, unk_token="[UNK]", pad_token="[PAD]",
                                   eos_token="[EOS]")
    fast.save_pretrained(path)
    torch.manual_seed(seed)
    config = GPT2Config(vocab_size=len(fast), n_positions=1024, n_embd=16, n_layer=2, n_head=2,
                        initializer_range=0.8, pad_token_id=0, eos_token_id=2, bos_token_id=2)
    GPT2LMHeadModel(config).eval().save_pretrained(path)
    return path


@pytest.fixture(scope="module")
def tiny_model_dir(tmp_path_factory):
    return save_tiny_causal_lm(tmp_path_factory.mktemp("tiny-causal-lm"))


def _cli(*args: str) -> dict:
    out = io.StringIO()
    call_command("annotate_with_model", *args, stdout=out)
    return json.loads(out.getvalue().strip().splitlines()[-1])


def hand_log_likelihood(model_dir: Path, prompt: str, choice: str) -> float:
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(model_dir)
    model = AutoModelForCausalLM.from_pretrained(model_dir).eval()
    prompt_ids = tokenizer(prompt)["input_ids"]
    choice_ids = tokenizer(" " + choice, add_special_tokens=False)["input_ids"]
    with torch.no_grad():
        logits = model(input_ids=torch.tensor([prompt_ids + choice_ids])).logits[0]
    log_probs = torch.log_softmax(logits.double(), dim=-1)
    return float(sum(log_probs[len(prompt_ids) - 1 + j, token] for j, token in enumerate(choice_ids)))


def test_scores_are_the_log_likelihood_of_each_choice(tiny_model_dir):
    question = ChoiceQuestion(messages=(), prompt="A1 : which sentence matches A2 ? Answer :",
                              choices=("S1-S2", "S2-S1"))
    backend = backend_create("local", model_dir=str(tiny_model_dir), device="cpu")
    reply = backend.answer(question)
    for choice in question.choices:
        assert reply.scores[choice] == pytest.approx(hand_log_likelihood(tiny_model_dir, question.prompt, choice),
                                                     abs=1e-4)
    assert reply.choice == max(reply.scores, key=reply.scores.get) and reply.status == ReplyStatus.ANSWERED
    assert backend.answer(question).scores == reply.scores  # no sampling: the same answer every time
    assert reply.requests == 0 and reply.prompt_tokens > 0


def test_cli_local_run_every_order_deterministic_and_cached(tiny_model_dir):
    study, _ = f.annotated_study(answers=[["S2-S1"] * 3, ["S1-S2"] * 3])
    first = _cli("--study", study.slug, "--backend", "local", "--model-dir", str(tiny_model_dir), "--device", "cpu",
                 "--json")
    assert first["ok"] and first["asks"] == 8 and first["answered"] + first["no_answer"] == 8
    assert first["requests"] == 0 and first["cost"] == 0.0 and first["prompt_tokens"] > 0
    answers = list(ModelAnswer.objects.order_by("study_item_id", "order").values_list("answer", "scores"))
    assert all(set(scores) == {"S1-S2", "S2-S1"} for _, scores in answers)
    again = _cli("--study", study.slug, "--backend", "local", "--model-dir", str(tiny_model_dir), "--device", "cpu",
                 "--json")
    assert again["cache_hits"] == 8 and again["prompt_tokens"] == 0
    run = ModelRun.objects.order_by("pk").last()
    assert list(ModelAnswer.objects.filter(run=run).order_by("study_item_id", "order")
                .values_list("answer", "scores")) == answers


def test_local_run_is_queued_on_the_gpu_queue(api, tiny_model_dir):
    study, _ = f.annotated_study(answers=[["S2-S1"]])
    response = api.post("/api/v1/model-runs/", {"study": study.slug, "backend": "local",
                                                "model_dir": str(tiny_model_dir)}, format="json")
    assert response.status_code == 202, response.content
    job = ModelRun.objects.get().job
    assert job.queue == "gpu" and job.params["queue"] == "gpu"


def test_a_directory_that_is_not_a_causal_lm_is_refused_and_nothing_stored(tmp_path):
    from tests.scoring.metric_fixtures import tiny_nli_dir

    study, _ = f.annotated_study(answers=[["S2-S1"]])
    classifier = tiny_nli_dir(tmp_path / "nli")
    out = io.StringIO()
    with pytest.raises(CommandError):
        call_command("annotate_with_model", "--study", study.slug, "--backend", "local", "--model-dir",
                     str(classifier), stdout=out)
    error = json.loads(out.getvalue().strip().splitlines()[-1])["error"]
    assert error["code"] == "not_causal_lm" and "BertForSequenceClassification" in error["message"]
    assert "(--model-dir)" in error["message"]
    (tmp_path / "empty").mkdir()
    with pytest.raises(Exception) as caught:
        backend_create("local", model_dir=str(tmp_path / "empty"))
    assert "has no config.json" in caught.value.message
    assert not ModelRun.objects.exists()
