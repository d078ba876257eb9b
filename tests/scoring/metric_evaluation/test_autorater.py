"""LLM-as-autorater against a fake OpenAI-compatible endpoint over real HTTP: Pauli et al.'s prompt is sent with the
item's style, source and rewrite; the replies' meaning/style ratings are the scores; unreadable replies count as the
mean of the readable ones (their post-processing)."""
from __future__ import annotations

import json
import re

import pytest

from core.errors import ApplicationError
from scoring.metric_evaluation import MetricItem, metrics_resolve
from scoring.metric_evaluation.autorater import PROMPT, SYSTEM, rating_read
from tests.scoring.fake_openai import FakeOpenAI

ITEMS = [
    MetricItem(source="hey u coming tonight ?", rewrite="Are you coming tonight?", target_style="formal"),
    MetricItem(source="The results are significant.", rewrite="results r big", target_style="layman"),
    MetricItem(source="gonna be late", rewrite="I shall be late.", target_style="formal"),
]
REPLIES = {"Are you coming tonight?": '{"meaning": 5, "style": 4}',
           "results r big": 'Sure! {"meaning": "2", "style": 3}',
           "I shall be late.": "I cannot rate this."}


def _answer(messages, body):
    user = next(m["content"] for m in messages if m["role"] == "user")
    rewrite = re.search(r"'target sentence': (.*)$", user).group(1)
    return REPLIES[rewrite]


def test_llm_rater_sends_pauli_et_als_prompt_and_reads_the_ratings():
    with FakeOpenAI(_answer, wrap=False) as fake:
        metric = metrics_resolve(["llm_rater"])[0]
        options = metric.check_options({"base_url": fake.base_url, "model": fake.model, "device": "cpu"})
        scores = metric.score(ITEMS, options=options)
        sent = [r["body"] for r in fake.chat_requests()]
    assert scores["llm_rater_content"] == [5.0, 2.0, 3.5]  # the third reply is unreadable: the mean of 5 and 2
    assert scores["llm_rater_style"] == [4.0, 3.0, 3.5]
    assert len(sent) == 3 and sent[0]["messages"][0] == {"role": "system", "content": SYSTEM}
    assert sent[1]["messages"][1]["content"] == PROMPT.format(style="understandable for layman",
                                                              source=ITEMS[1].source, rewrite=ITEMS[1].rewrite)
    assert "rewritten to be more formal in the style" in sent[0]["messages"][1]["content"]
    assert sent[0]["max_tokens"] == 50 and sent[0]["temperature"] == 0.0


def test_rating_read_takes_json_or_the_number_after_the_key():
    assert rating_read(json.dumps({"meaning": 4, "style": 1}), "style") == 1.0
    assert rating_read('{"meaning": 7}', "meaning") is None  # off the 1-5 scale
    assert rating_read('blah "meaning": 3, more', "meaning") == 3.0
    assert rating_read("no json", "style") is None


def test_llm_rater_needs_an_endpoint_and_a_model():
    metric = metrics_resolve(["llm_rater"])[0]
    with pytest.raises(ApplicationError, match="not an http"):
        metric.check_options({"model": "m"})
    with pytest.raises(ApplicationError, match="model's name"):
        metric.check_options({"base_url": "http://127.0.0.1:9/v1"})


def test_llm_rater_with_no_readable_reply_is_an_error():
    with FakeOpenAI(lambda messages, body: "no idea", wrap=False) as fake:
        metric = metrics_resolve(["llm_rater"])[0]
        with pytest.raises(ApplicationError, match="no reply .* held a readable rating"):
            metric.score(ITEMS[:1], options=metric.check_options({"base_url": fake.base_url, "model": fake.model}))
