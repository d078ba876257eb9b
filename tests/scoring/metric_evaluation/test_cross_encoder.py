"""The cross-encoder similarity metric on a tiny random cross-encoder built here: its scores are sentence-transformers'
own CrossEncoder.predict on the same pairs; a many-label model is refused."""
from __future__ import annotations

import pytest

from core.errors import ApplicationError
from scoring.metric_evaluation import MetricItem, metrics_resolve
from tests.scoring.metric_fixtures import tiny_cross_encoder_dir, tiny_nli_dir

pytestmark = pytest.mark.model

ITEMS = [
    MetricItem(source="hey u coming tonight ?", rewrite="are you coming tonight ?", reference="will you come ?"),
    MetricItem(source="gonna be late", rewrite="i will be late ."),
    MetricItem(source="thank you very much for your help .", rewrite="thanks a lot", reference="thanks"),
]


def test_cross_encoder_scores_are_crossencoder_predict(tmp_path):
    path = tiny_cross_encoder_dir(tmp_path / "ce")
    metric = metrics_resolve(["cross_encoder"])[0]
    options = metric.check_options({"model_path": str(path), "device": "cpu", "batch_size": 2})
    scores = metric.score(ITEMS, options=options)
    from sentence_transformers import CrossEncoder  # heavy: torch loads in this test, not when the suite is collected

    reference = CrossEncoder(str(path), device="cpu")
    expected = reference.predict([(i.source, i.rewrite) for i in ITEMS])
    assert scores["cross_encoder_src"] == pytest.approx([float(v) for v in expected], abs=1e-5)
    expected_ref = reference.predict([(ITEMS[0].reference, ITEMS[0].rewrite), (ITEMS[2].reference, ITEMS[2].rewrite)])
    assert scores["cross_encoder_ref"][0] == pytest.approx(float(expected_ref[0]), abs=1e-5)
    assert scores["cross_encoder_ref"][1] is None
    assert scores["cross_encoder_ref"][2] == pytest.approx(float(expected_ref[1]), abs=1e-5)
    assert len(set(round(v, 6) for v in scores["cross_encoder_src"])) == 3  # not a constant model
    assert all(0 <= v <= 1 for v in scores["cross_encoder_src"])  # one label: sigmoid


def test_an_nli_model_with_three_labels_is_refused(tmp_path):
    path = tiny_nli_dir(tmp_path / "nli")
    metric = metrics_resolve(["cross_encoder"])[0]
    with pytest.raises(ApplicationError, match="one output.*3 labels"):
        metric.check_options({"model_path": str(path)})
    with pytest.raises(ApplicationError, match="needs a local model directory"):
        metric.check_options({})
