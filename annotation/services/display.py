"""What a participant sees of an item, and how a displayed answer maps back to the item's canonical order.

Ordering items (instances and screening questions alike) may be shown with S1 and S2 swapped, so that a
screening question's answer is not always the same; `shown["swapped"]` records it and `canonical_answer` undoes it.
"""
from __future__ import annotations

import random
from typing import Any

from annotation.models import CHOICES, ORDERING_KINDS, ItemKind, Study, StudyItem
from tasks.models import ScreeningQuestion


def _ordering_texts(*, kind: str, anchor_1: str, anchor_2: str, sentence_1: str, sentence_2: str,
                    swapped: bool) -> dict[str, str]:
    first, second = (sentence_2, sentence_1) if swapped else (sentence_1, sentence_2)
    texts = {"anchor_1": anchor_1, "sentence_1": first, "sentence_2": second}
    if kind == ItemKind.QUADRUPLE:
        texts = {"anchor_1": anchor_1, "anchor_2": anchor_2, "sentence_1": first, "sentence_2": second}
    return texts


def shown_for_item(*, study: Study, item: StudyItem, rng: random.Random | None = None, swapped: bool | None = None,
                   outputs_reversed: bool | None = None) -> dict[str, Any]:
    """The display of a study item, fixed at reservation time and stored on the reservation and its responses.

    The random choices (S1/S2 swapped, the order of ranked outputs) are drawn from `rng`, unless `swapped` /
    `outputs_reversed` fix them: model annotators are shown every order on purpose (outputs in their stored order
    or reversed)."""
    kind = item.kind or study.item_kind
    if kind in ORDERING_KINDS:
        swapped = rng.random() < 0.5 if swapped is None else swapped
        if item.instance_id:
            inst = item.instance
            texts = _ordering_texts(kind=kind, anchor_1=inst.anchor_1, anchor_2=inst.anchor_2,
                                    sentence_1=inst.sentence_1, sentence_2=inst.sentence_2, swapped=swapped)
        else:
            p = item.payload
            texts = _ordering_texts(kind=kind, anchor_1=p.get("anchor_1", ""), anchor_2=p.get("anchor_2", ""),
                                    sentence_1=p.get("sentence_1", ""), sentence_2=p.get("sentence_2", ""),
                                    swapped=swapped)
        order = ["S2", "S1"] if swapped else ["S1", "S2"]
        return {"kind": kind, "texts": texts, "choices": CHOICES[kind], "swapped": swapped, "sentence_order": order}
    payload = item.payload or {}
    if kind == ItemKind.LIKERT:
        texts = {"source": payload.get("source", ""), "rewrite": payload.get("rewrite", "")}
        if payload.get("reference"):
            texts["reference"] = payload["reference"]
        texts["target_style"] = payload.get("target_style", "")
        return {"kind": kind, "texts": texts, "choices": [], "questions": [q["name"] for q in study.questions]}
    if kind == ItemKind.RANKING:
        outputs = [{"id": str(o["id"]), "text": o["text"], "system": o.get("system", "")}
                   for o in payload.get("outputs", [])]
        if outputs_reversed is None:
            rng.shuffle(outputs)
        elif outputs_reversed:
            outputs.reverse()
        return {"kind": kind, "texts": {"source": payload.get("source", "")}, "choices": [],
                "outputs": outputs}
    if kind == ItemKind.REWRITE:
        return {"kind": kind, "texts": {"source": payload.get("source", ""),
                                        "target_style": payload.get("target_style", "")},
                "choices": [], "min_length": study.rewrite_min_length,
                # Reviewed rewrite studies (services/rewrites.py) put their limits on every item.
                **{key: payload[key] for key in ("max_length", "copy_threshold", "language") if key in payload}}
    raise ValueError(f"unknown item kind {kind!r}")


def shown_for_screening(*, study: Study, question: ScreeningQuestion, rng: random.Random) -> dict[str, Any]:
    kind = study.item_kind
    swapped = rng.random() < 0.5
    texts = _ordering_texts(kind=kind, anchor_1=question.anchor_1, anchor_2=question.anchor_2,
                            sentence_1=question.sentence_1, sentence_2=question.sentence_2, swapped=swapped)
    order = ["S2", "S1"] if swapped else ["S1", "S2"]
    return {"kind": kind, "texts": texts, "choices": CHOICES[kind], "swapped": swapped, "sentence_order": order}


def public_item(*, shown: dict[str, Any], public_id: str, position: int, study: Study) -> dict[str, Any]:
    """The item as sent to the participant: no system names, no swap flag, nothing that tells the answer."""
    item: dict[str, Any] = {"id": public_id, "kind": shown["kind"], "position": position,
                            "texts": shown["texts"], "choices": shown["choices"]}
    if shown["kind"] == ItemKind.LIKERT:
        item["questions"] = public_questions(study)
    elif shown["kind"] == ItemKind.RANKING:
        item["outputs"] = [{"id": o["id"], "text": o["text"]} for o in shown["outputs"]]
    elif shown["kind"] == ItemKind.REWRITE:
        item["min_length"] = shown["min_length"]
        item.update({key: shown[key] for key in ("max_length", "copy_threshold") if key in shown})
    return item


def public_questions(study: Study) -> list[dict[str, Any]]:
    return [
        {"name": q["name"], "text": q.get("text", q["name"]), "min": q["min"], "max": q["max"],
         "labels": {str(k): v for k, v in (q.get("labels") or {}).items()}}
        for q in study.questions
    ]


def finished_payload(*, state: str, completion_code: str | None, redirect_url: str | None,
                     progress: dict[str, int]) -> dict[str, Any]:
    """What `next` answers once a batch has no item left: how it ended, the code and where to go with it."""
    return {"item": None, "state": state, "completion_code": completion_code, "redirect_url": redirect_url,
            "progress": progress}


def redirect_with_code(url: str, code: str, *, platform: str) -> str | None:
    """The study's redirect URL with `{code}` filled in (Prolific's completion link takes the code as `cc=`).

    None for MTurk workers: an MTurk assignment ends by posting to MTurk's external submit form (the page builds
    it from `turkSubmitTo`), never by a redirect to another platform; None too when the study has no redirect URL."""
    if not url or platform == "mturk":
        return None
    if not url.lower().startswith(("http://", "https://")):
        return None  # never hand the browser anything but an http(s) link (the database refuses others too)
    return url.replace("{code}", code) if "{code}" in url else url
