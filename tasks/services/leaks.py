"""Leak detector: do trivial surface features decide a corpus's task instances?

A benchmark must measure style, not how its corpora were prepared. Each surface feature below (a tokenization
artefact, an apostrophe, the final mark, a digit, the case of the first letter, the length) is scored as a
style-similarity method on the corpus's generated instances, with STEL's decision rule (`tasks.stel.decision`):
two texts are alike when their feature values are equal (length: 1 − |a − b| / max(a, b)). A feature that decides
many instances and is almost always right when it does (at least `min_accuracy_decided`, with a binomial test
against chance below `alpha`) gives the label away: a warning with examples.

Length is reported but never called a leak: a length difference is part of what many styles are (a contraction
is shorter than its expansion, so in STEL's quadruples length alone picks the parallel order, as it does in
STEL's own contraction instances; simple sentences are shorter than complex ones). A length leak that is not the
style (boilerplate on one side) shows up in the report's `length` row, for a researcher to judge.
"""
from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from core.errors import ApplicationError
from tasks.error_codes import INVALID_VALUE, NO_INSTANCES, UNKNOWN_SETUP
from tasks.models import Corpus, Order, Setup, TaskInstance
from tasks.services.generation import _min_edit_distance  # the threshold generation tested the corpus with
from tasks.services.normalization import has_tokenization_artefact
from tasks.services.pair_test import pair_test
from tasks.stel.decision import predictions_decide

# Features that are a marker of the component's style itself (number substitutions are digits; informal writing
# drops capitals and final stops): reported as notes, never as leaks. An apostrophe is not listed for contraction:
# STEL built its pairs so that both sides have one, and a contraction corpus where only one side has one leaks.
STYLE_MARKERS: dict[str, frozenset[str]] = {
    "nbr_substitution": frozenset({"digits"}),
    "formality": frozenset({"first_letter_uppercase", "final_punctuation"}),
}

_FINAL = re.compile(r"[.!?…]+[\"')\]]*$")
_DIGIT = re.compile(r"\d")


def _final_mark(text: str) -> str:
    match = _FINAL.search(text.rstrip())
    return match.group(0)[0] if match else "none"


def _first_letter_upper(text: str) -> bool:
    letters = [c for c in text if c.isalpha()]
    return bool(letters) and letters[0].isupper()


@dataclass(frozen=True)
class SurfaceFeature:
    name: str
    description: str
    value: Callable[[str], Any]
    graded: bool = False  # numeric: similarity 1 − |a − b| / max(a, b) instead of equal / not equal
    informational: bool = False  # reported, never a leak (see the module docstring)


FEATURES: tuple[SurfaceFeature, ...] = (
    SurfaceFeature("tokenization_artefact", "punctuation or a clitic set apart by spaces (`Sudan .`, `Islam 's`)",
                   has_tokenization_artefact),
    SurfaceFeature("apostrophe", "contains an apostrophe (' or ’)", lambda t: "'" in t or "\u2019" in t),
    SurfaceFeature("final_punctuation", "the mark the text ends with (. ! ? or none)", _final_mark),
    SurfaceFeature("digits", "contains a digit", lambda t: _DIGIT.search(t) is not None),
    SurfaceFeature("first_letter_uppercase", "the first letter is upper-case", _first_letter_upper),
    SurfaceFeature("double_space", "contains two spaces in a row", lambda t: "  " in t),
    SurfaceFeature("length", "length in characters (graded; informational: often part of the style)", len,
                   graded=True, informational=True),
)


def _similarity(feature: SurfaceFeature, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    if feature.graded:
        x, y = x.astype(float), y.astype(float)
        largest = np.maximum(x, y)
        return np.where(largest > 0, 1 - np.abs(x - y) / np.where(largest > 0, largest, 1), 1.0)
    return (x == y).astype(float)


def feature_audit(
    *, instances: Sequence[tuple[str, str, str, str, int]], feature: SurfaceFeature, alpha: float,
    min_accuracy_decided: float, min_decided: int, style_marker: bool = False,
) -> dict[str, Any]:
    """Score one feature on (anchor_1, anchor_2, sentence_1, sentence_2, correct 1|2) tuples; anchor_2 "" = triple."""
    texts = list(zip(*instances, strict=True))[:4] if instances else [(), (), (), ()]
    values = [np.array([feature.value(t) for t in column], dtype=object) for column in texts]
    a1, a2, s1, s2 = values
    correct = np.array([row[4] for row in instances], dtype=np.int64)
    quad = np.array([bool(row[1]) for row in instances], dtype=bool)
    s11, s12 = _similarity(feature, a1, s1), _similarity(feature, a1, s2)
    s22, s21 = _similarity(feature, a2, s2), _similarity(feature, a2, s1)
    predictions = predictions_decide(s11, s12, s22, s21, quad)
    decided = predictions != 0
    n_decided, n_right = int(decided.sum()), int((predictions[decided] == correct[decided]).sum())
    n = len(instances)
    from scipy.stats import binomtest  # here, not at import: scipy.stats costs every process half a second

    pvalue = float(binomtest(n_right, n_decided, 0.5, alternative="greater").pvalue) if n_decided else 1.0
    accuracy_decided = n_right / n_decided if n_decided else None
    decides = bool(n_decided >= min_decided and pvalue < alpha and accuracy_decided is not None
                   and accuracy_decided >= min_accuracy_decided)
    leak = decides and not feature.informational and not style_marker
    examples = []
    if decides:
        for index in np.flatnonzero(decided & (predictions == correct))[:3].tolist():
            row = instances[index]
            examples.append({
                "texts": {"A1": row[0], "A2": row[1], "S1": row[2], "S2": row[3]},
                "values": {"A1": a1[index], "A2": a2[index] if row[1] else None, "S1": s1[index], "S2": s2[index]},
            })
    return {
        "feature": feature.name, "description": feature.description, "informational": feature.informational,
        "style_marker": style_marker, "decides": decides,
        "instances": n, "decided": n_decided,
        "right": n_right, "accuracy": (n_right + 0.5 * (n - n_decided)) / n if n else None,
        "accuracy_decided": accuracy_decided, "pvalue": pvalue, "leak": leak, "examples": examples,
    }


def instances_audit(
    *, corpus: Corpus, setup: str | None = None, alpha: float = 1e-3, min_accuracy_decided: float = 0.8,
    min_decided: int = 20, style_markers: frozenset[str] | None = None,
) -> dict[str, Any]:
    """Audit the instances of `corpus` (one setup, or all) for surface features that give the label away.

    `style_markers` (default: `STYLE_MARKERS` of the corpus's component) are features that are the style itself:
    when one decides the instances it gives a note, not a leak.

    A leak needs all three: at least `min_decided` decided instances, a one-sided binomial p-value below `alpha`
    (divided by the number of features: Bonferroni), and an accuracy on decided instances of at least
    `min_accuracy_decided`."""
    if setup is not None and setup not in Setup.values:
        raise ApplicationError(f"unknown setup {setup!r} (one of: {', '.join(Setup.values)})", code=UNKNOWN_SETUP)
    if not 0 < alpha < 1 or not 0.5 < min_accuracy_decided <= 1 or min_decided < 1:
        raise ApplicationError("alpha must be in (0, 1), min_accuracy_decided in (0.5, 1], min_decided ≥ 1",
                               code=INVALID_VALUE)
    queryset = TaskInstance.objects.filter(corpus=corpus)
    if setup:
        queryset = queryset.filter(setup=setup)
    stored = list(queryset.values_list("pk", "stel_id", "anchor_1", "anchor_2", "sentence_1", "sentence_2",
                                       "correct_order").iterator(5000))
    rows = [(a1, a2, s1, s2, 1 if order == Order.S1_S2 else 2) for _, _, a1, a2, s1, s2, order in stored]
    if not rows:
        raise ApplicationError(f"corpus '{corpus.name}' has no{' ' + setup if setup else ''} instances to audit; "
                               "generate instances first", code=NO_INSTANCES)
    report = rows_audit(rows=rows, component=corpus.component.name, setup=setup, alpha=alpha,
                        min_accuracy_decided=min_accuracy_decided, min_decided=min_decided, style_markers=style_markers)
    artefacts = artefact_only_pairs(stored, min_edit_distance=_min_edit_distance(corpus))
    if artefacts["instances"]:
        report["warnings"].append(
            f"{artefacts['instances']} instance(s) hold a pair whose texts differ only in how quote marks or spaces "
            f"were typed (e.g. {artefacts['examples'][0]['instance']}): such a pair is no paraphrase pair; "
            "re-import the corpus (its pair test now compares quote-normalized texts) and generate again")
        report["passed"] = False
    return {"corpus": corpus.name, **report, "artefact_only": artefacts}


def artefact_only_pairs(stored: Sequence[tuple], *, min_edit_distance: int, max_examples: int = 10) -> dict[str, Any]:
    """Instances (pk, stel_id, anchor_1, anchor_2, sentence_1, sentence_2, …) whose anchor pair or alternative
    pair passes STEL's pair test only through its quote marks or spacing (pair_test's `artefact_only`): made before
    the pair test compared quote-normalized texts."""
    examples, count = [], 0
    for pk, stel_id, a1, a2, s1, s2, *_ in stored:
        found = [(name, text_1, text_2) for name, text_1, text_2 in (("anchors", a1, a2), ("alternatives", s1, s2))
                 if text_1 and text_2
                 and pair_test(text_1, text_2, min_edit_distance=min_edit_distance) == "artefact_only"]
        if not found:
            continue
        count += 1
        if len(examples) < max_examples:
            examples.append({"instance": stel_id or f"#{pk}", "id": pk,
                             "pairs": [{"pair": name, "texts": [text_1, text_2]} for name, text_1, text_2 in found]})
    return {"instances": count, "examples": examples}


def rows_audit(
    *, rows: Sequence[tuple[str, str, str, str, int]], component: str, setup: str | None = None,
    alpha: float = 1e-3, min_accuracy_decided: float = 0.8, min_decided: int = 20,
    style_markers: frozenset[str] | None = None,
) -> dict[str, Any]:
    """The audit of (anchor_1, anchor_2, sentence_1, sentence_2, correct 1|2) rows of one component: a corpus's
    instances (instances_audit) or the rows of an export (its dataset card)."""
    threshold = alpha / len(FEATURES)
    markers = STYLE_MARKERS.get(component, frozenset()) if style_markers is None else style_markers
    unknown = sorted(set(markers) - {feature.name for feature in FEATURES})
    if unknown:
        raise ApplicationError(f"unknown feature(s) {', '.join(unknown)} (known: "
                               f"{', '.join(f.name for f in FEATURES)})", code=INVALID_VALUE)
    features = [feature_audit(instances=rows, feature=feature, alpha=threshold,
                              min_accuracy_decided=min_accuracy_decided, min_decided=min_decided,
                              style_marker=feature.name in markers)
                for feature in FEATURES]
    leaks = [f["feature"] for f in features if f["leak"]]
    warnings = [
        f"{f['feature']} ({f['description']}) decides {f['decided']} of {f['instances']} instances and is right in "
        f"{f['right']} (p = {f['pvalue']:.1e}): the instances leak their label; normalize the texts (e.g. "
        "re-import the corpus with Detokenize on) or rebuild it before a study uses them"
        for f in features if f["leak"]
    ]
    notes = [
        f"{f['feature']} decides {f['decided']} of {f['instances']} instances (right in {f['right']}): a marker of "
        f"{component} itself, not a leak, but a benchmark this marker alone solves measures little"
        for f in features if f["decides"] and not f["leak"]
    ]
    return {
        "component": component, "setup": setup, "instances": len(rows),
        "alpha": alpha, "min_accuracy_decided": min_accuracy_decided, "style_markers": sorted(markers),
        "passed": not leaks, "leaks": leaks, "warnings": warnings, "notes": notes, "features": features,
    }
