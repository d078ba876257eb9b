"""A plain-shaped sentence-transformers model driven by transformers directly: the same embeddings bit for bit,
without importing sentence-transformers; any other shape is left to sentence-transformers."""
from __future__ import annotations

import csv
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from django.conf import settings

from scoring.model_scoring.neural import packaged_minilm_path
from scoring.model_scoring.st_plain import PlainPipeline, plain_pipeline

CONFIGS = ("modules.json", "sentence_bert_config.json", "config_sentence_transformers.json", "1_Pooling/config.json")


def config_copy(tmp_path: Path) -> Path:
    """The packaged MiniLM's sentence-transformers configuration files (not its weights) in a folder to edit."""
    for name in CONFIGS:
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(packaged_minilm_path() / name, tmp_path / name)
    return tmp_path


def edit(path: Path, change) -> None:
    data = json.loads(path.read_text())
    change(data)
    path.write_text(json.dumps(data))


def test_the_packaged_minilm_is_plain_with_normalization():
    assert plain_pipeline(packaged_minilm_path()) == PlainPipeline(max_seq_length=256, normalize=True)


@pytest.mark.parametrize("name, change", [
    ("1_Pooling/config.json", lambda d: d.update(pooling_mode_cls_token=True)),
    ("1_Pooling/config.json", lambda d: d.update(pooling_mode_mean_tokens=False, pooling_mode_max_tokens=True)),
    ("1_Pooling/config.json", lambda d: d.update(pooling_mode="lasttoken")),
    ("sentence_bert_config.json", lambda d: d.update(do_lower_case=True)),
    ("sentence_bert_config.json", lambda d: d.pop("max_seq_length")),
    ("config_sentence_transformers.json", lambda d: d.update(prompts={"query": "query: "},
                                                             default_prompt_name="query")),
    ("modules.json", lambda d: d.insert(2, {"idx": 2, "name": "2", "path": "2_Dense",
                                            "type": "sentence_transformers.models.Dense"})),
    ("modules.json", lambda d: d.reverse()),
])
def test_any_other_shape_is_left_to_sentence_transformers(tmp_path, name, change):
    folder = config_copy(tmp_path)
    assert plain_pipeline(folder) is not None
    edit(folder / name, change)
    assert plain_pipeline(folder) is None


def test_without_normalize_module_the_pipeline_does_not_normalize(tmp_path):
    folder = config_copy(tmp_path)
    edit(folder / "modules.json", lambda d: d.pop())
    assert plain_pipeline(folder) == PlainPipeline(max_seq_length=256, normalize=False)


def test_a_folder_without_sentence_transformers_files_is_not_plain(tmp_path):
    assert plain_pipeline(tmp_path) is None


@pytest.mark.model
@pytest.mark.slow  # a fresh interpreter, so that what it imports can be seen
def test_stel_sentences_embed_bit_for_bit_as_sentence_transformers_without_importing_it(shared_data, tmp_path):
    stel = shared_data / "stel"
    sentences = set()
    for name in ("quad_questions_char_contraction.tsv", "quad_questions_char_substitution.tsv"):
        with (stel / name).open(encoding="utf-8", newline="") as handle:
            for row in csv.DictReader(handle, delimiter="\t"):
                sentences |= {row["Anchor 1"], row["Anchor 2"], row["Alternative 1.1"], row["Alternative 1.2"]}
    (tmp_path / "sentences.json").write_text(json.dumps(sorted(sentences)))
    code = """
import json, sys
import numpy as np
import django
django.setup()
from scoring.model_scoring.neural import SentenceTransformerSimilarity, packaged_minilm_path
from scoring.model_scoring import neural
sentences = json.loads(open(sys.argv[1]).read())
direct = SentenceTransformerSimilarity(device="cpu", argument="minilm").encode(sentences)
imported = "sentence_transformers" in sys.modules
neural.plain_pipeline = lambda path: None  # the same method, through sentence-transformers' own modules
through_st = SentenceTransformerSimilarity(device="cpu", argument="minilm").encode(sentences)
print(json.dumps({"imported": imported, "now": "sentence_transformers" in sys.modules, "rows": len(direct),
                  "equal": bool(np.array_equal(direct, through_st)), "dtype": str(direct.dtype)}))
"""
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "config.settings.test"}
    proc = subprocess.run([sys.executable, "-c", code, str(tmp_path / "sentences.json")], cwd=settings.BASE_DIR,
                          env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    assert result == {"imported": False, "now": True, "rows": len(sentences), "equal": True, "dtype": "float32"}
