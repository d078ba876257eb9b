"""Model metrics on tiny randomly initialised models built here: the formulas against hand computation."""
from __future__ import annotations

import math

import numpy as np
import pytest

from core.errors import ApplicationError
from scoring.metric_evaluation import MetricItem, metrics_resolve
from scoring.metric_evaluation.base import minilm_path
from scoring.metric_evaluation.logprob import SYSTEM_PROMPT, build_contexts, encode_pair
from tests.helpers import cuda_available  # noqa: F401 (skipif strings)
from tests.scoring.metric_fixtures import tiny_gpt2_dir, tiny_nli_dir

pytestmark = pytest.mark.model

ITEMS = [
    MetricItem(source="hey u coming tonight ?", rewrite="are you coming tonight ?", target_style="formal"),
    MetricItem(source="gonna be late", rewrite="i will be late .", target_style="formal"),
    MetricItem(source="thank you very much for your help .", rewrite="thanks a lot", target_style="informal"),
    MetricItem(source="please send me the report by friday .", rewrite="send me report", target_style="informal"),
]


@pytest.fixture(scope="module")
def gpt2_dir(tmp_path_factory):
    return tiny_gpt2_dir(tmp_path_factory.mktemp("gpt2"))


@pytest.fixture(scope="module")
def nli_dir(tmp_path_factory):
    return tiny_nli_dir(tmp_path_factory.mktemp("nli"))


def _rewrite_token_probs(tokenizer, model, context: str, rewrite: str) -> list[float]:
    """Unbatched, unpadded: p(token | everything before it) for each token of the rewrite."""
    import torch

    context_ids = tokenizer(context)["input_ids"]
    rewrite_ids = tokenizer(" " + rewrite, add_special_tokens=False)["input_ids"]
    ids = torch.tensor([context_ids + rewrite_ids])
    with torch.no_grad():
        probs = torch.softmax(model(input_ids=ids).logits[0].double(), dim=-1)
    return [float(probs[len(context_ids) - 1 + k, token]) for k, token in enumerate(rewrite_ids)]


def test_logprob_content_and_style_match_hand_computation(gpt2_dir):
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(gpt2_dir)
    model = AutoModelForCausalLM.from_pretrained(gpt2_dir).eval()
    metric = metrics_resolve(["logprob"])[0]
    # batch_size 5 mixes sequences of different lengths in one padded batch.
    options = metric.check_options({"model_path": str(gpt2_dir), "device": "cpu", "batch_size": 5})
    scores = metric.score(ITEMS, options=options)
    for n, item in enumerate(ITEMS):
        # Pauli et al.'s prompts (run_our_likelihood.py); this tiny model has no chat template: "system\nuser\n".
        style = _rewrite_token_probs(
            tokenizer, model, f"{SYSTEM_PROMPT}\nRewrite the following sentence to be {item.target_style}: "
                              f"{item.source}\n", item.rewrite)
        para = _rewrite_token_probs(
            tokenizer, model, f"{SYSTEM_PROMPT}\nParaphrase the following sentence: {item.source}\n", item.rewrite)
        rep = _rewrite_token_probs(
            tokenizer, model, f"{SYSTEM_PROMPT}\nRepeat the following sentence: {item.source}\n", item.rewrite)
        content = np.mean([math.log(max(a, b, c)) for a, b, c in zip(style, para, rep, strict=True)])
        strength = np.mean([a - max(b, c) for a, b, c in zip(style, para, rep, strict=True)])
        assert scores["logprob_content"][n] == pytest.approx(content, abs=1e-5)
        assert scores["logprob_style"][n] == pytest.approx(strength, abs=1e-5)
        # The max really is taken per token: it differs from taking any single context throughout.
        assert scores["logprob_content"][n] >= np.mean(np.log(para)) - 1e-6
    # Not a degenerate model: the style context changes the probabilities.
    assert any(abs(s) > 1e-3 for s in scores["logprob_style"])


def test_logprob_uses_the_models_chat_template_and_pauli_et_als_style_words(gpt2_dir):
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(gpt2_dir)
    tokenizer.chat_template = ("{% for m in messages %}<{{ m['role'] }}>{{ m['content'] }}{% endfor %}"
                               "{% if add_generation_prompt %}<assistant>{% endif %}")
    item = MetricItem(source="the drug inhibits the enzyme", rewrite="the medicine stops it", target_style="layman")
    contexts = build_contexts(item, {"style": "Rewrite the following sentence to be {style}: {source}",
                                     "paraphrase": "Paraphrase the following sentence: {source}",
                                     "repeat": "Repeat the following sentence: {source}"})
    context_ids, rewrite_ids = encode_pair(tokenizer, contexts["style"], item.rewrite)
    expected = tokenizer(f"<system>{SYSTEM_PROMPT}<user>Rewrite the following sentence to be understandable for "
                         f"layman: {item.source}<assistant>", add_special_tokens=False)["input_ids"]
    assert context_ids == expected
    assert rewrite_ids == tokenizer(item.rewrite, add_special_tokens=False)["input_ids"]


def test_logprob_batching_does_not_change_scores(gpt2_dir):
    metric = metrics_resolve(["logprob"])[0]
    one = metric.score(ITEMS, options=metric.check_options({"model_path": str(gpt2_dir), "batch_size": 1}))
    many = metric.score(ITEMS, options=metric.check_options({"model_path": str(gpt2_dir), "batch_size": 12}))
    assert one["logprob_content"] == pytest.approx(many["logprob_content"], abs=1e-5)
    assert one["logprob_style"] == pytest.approx(many["logprob_style"], abs=1e-5)


def test_nli_mutual_averages_entailment_both_directions(nli_dir):
    import torch
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(nli_dir)
    model = AutoModelForSequenceClassification.from_pretrained(nli_dir).eval()
    metric = metrics_resolve(["nli_mutual"])[0]
    options = metric.check_options({"model_path": str(nli_dir), "batch_size": 3})
    # label2id has "ENTAILMENT": 0 — matched case-insensitively, not assumed to be the last class.
    assert options["entailment_id"] == 0
    scores = metric.score(ITEMS, options=options)["nli_mutual"]
    for n, item in enumerate(ITEMS):
        probs = []
        for premise, hypothesis in ((item.source, item.rewrite), (item.rewrite, item.source)):
            with torch.no_grad():
                logits = model(**tokenizer(premise, hypothesis, return_tensors="pt")).logits[0].double()
            probs.append(float(torch.softmax(logits, dim=-1)[0]))
        assert scores[n] == pytest.approx((probs[0] + probs[1]) / 2, abs=1e-5)
    assert len({round(s, 6) for s in scores}) == len(ITEMS)


def test_nli_model_without_entailment_label_is_rejected(tmp_path):
    path = tiny_nli_dir(tmp_path / "nli", label2id={"yes": 0, "no": 1})
    metric = metrics_resolve(["nli_mutual"])[0]
    with pytest.raises(ApplicationError, match="entailment"):
        metric.check_options({"model_path": str(path)})


def test_model_metrics_need_an_existing_local_path(tmp_path):
    logprob, nli = metrics_resolve(["logprob", "nli_mutual"])
    with pytest.raises(ApplicationError) as missing:
        logprob.check_options({})
    assert missing.value.code == "missing_model_path" and missing.value.details == {"field": "lm_model"}
    assert "needs a local model directory" in missing.value.message and "--" not in missing.value.message
    with pytest.raises(ApplicationError) as bad:
        nli.check_options({"model_path": str(tmp_path / "nowhere")})
    assert bad.value.code == "bad_model_path" and "nowhere" in bad.value.message


def test_embedding_cosine_with_packaged_minilm():
    from sentence_transformers import SentenceTransformer

    metric = metrics_resolve(["embedding_cosine"])[0]
    options = metric.check_options({})  # default: the packaged MiniLM directory
    assert options["model_path"] == str(minilm_path().resolve())
    items = [
        MetricItem(source="Could you please send me the report?", rewrite="can u send me the report",
                   reference="Would you send me the report?"),
        MetricItem(source="Could you please send me the report?", rewrite="The weather is cold in Norway."),
    ]
    scores = metric.score(items, options=options)
    model = SentenceTransformer(str(minilm_path()), device="cpu")
    vectors = model.encode([items[0].source, items[0].rewrite, items[0].reference], normalize_embeddings=True)
    assert scores["embedding_cosine_src"][0] == pytest.approx(float(vectors[0] @ vectors[1]), abs=1e-5)
    assert scores["embedding_cosine_ref"][0] == pytest.approx(float(vectors[2] @ vectors[1]), abs=1e-5)
    assert scores["embedding_cosine_ref"][1] is None
    # A paraphrase is closer to its source than an unrelated sentence.
    assert scores["embedding_cosine_src"][0] > scores["embedding_cosine_src"][1] + 0.3


def test_bertscore_offline_with_local_path_equals_bert_score_package():
    import bert_score

    metric = metrics_resolve(["bertscore"])[0]
    options = metric.check_options({"device": "cpu"})
    assert options["num_layers"] == 6  # MiniLM-L6's last layer, read from its config
    items = [MetricItem(source="I am going to be late.", rewrite="gonna be late lol"),
             MetricItem(source="Thank you very much.", rewrite="Thanks a lot.")]
    scores = metric.score(items, options=options)["bertscore_src"]
    _, _, f1 = bert_score.score([i.rewrite for i in items], [i.source for i in items],
                                model_type=str(minilm_path()), num_layers=6, device="cpu")
    assert scores == pytest.approx([float(v) for v in f1], abs=1e-5)


@pytest.mark.skipif("cuda_available()", reason="checks the message given on a machine without a GPU")
def test_cuda_requested_without_a_gpu_is_a_clear_error(gpt2_dir):
    metric = metrics_resolve(["logprob"])[0]
    with pytest.raises(ApplicationError, match="no CUDA GPU is available"):
        metric.check_options({"model_path": str(gpt2_dir), "device": "cuda"})
    with pytest.raises(ApplicationError, match="device must be auto, cpu or cuda"):
        metric.check_options({"model_path": str(gpt2_dir), "device": "tpu"})


@pytest.mark.skipif("not cuda_available()", reason="CUDA path: needs a GPU")
def test_logprob_on_cuda_in_half_precision_agrees_with_cpu(gpt2_dir):
    metric = metrics_resolve(["logprob"])[0]
    cpu = metric.score(ITEMS, options=metric.check_options({"model_path": str(gpt2_dir), "device": "cpu"}))
    cuda = metric.score(ITEMS, options=metric.check_options({"model_path": str(gpt2_dir), "device": "cuda"}))
    assert cuda["logprob_content"] == pytest.approx(cpu["logprob_content"], abs=5e-2)


def test_bertscore_takes_bert_scores_own_layer_for_a_model_it_knows_by_name(tmp_path):
    """A local copy of deberta-xlarge-mnli (Pauli et al.'s BERTScore model) gets bert-score's layer 40, by folder
    name or by the hub name its config records; another model its last layer."""
    import json as json_module

    from bert_score.utils import model2layers

    from scoring.metric_evaluation.neural import bertscore_default_layer

    named = tmp_path / "deberta-xlarge-mnli"
    recorded = tmp_path / "my-copy"
    other = tmp_path / "other"
    for path, config in ((named, {"num_hidden_layers": 48}),
                         (recorded, {"num_hidden_layers": 48, "_name_or_path": "microsoft/deberta-xlarge-mnli"}),
                         (other, {"num_hidden_layers": 3})):
        path.mkdir()
        (path / "config.json").write_text(json_module.dumps(config))
    assert bertscore_default_layer(named) == model2layers["microsoft/deberta-xlarge-mnli"] == 40
    assert bertscore_default_layer(recorded) == 40
    assert bertscore_default_layer(other) == 3
