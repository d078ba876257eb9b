"""The method registry: a spec string → a SimilarityMethod instance.

Specs: a built-in name (`char3gram`, `word_length`, `punctuation`, `uppercase`, `levenshtein`, `pos`), a model
method `hf:<path>`, `st:<path>` or `nsp:<path>` (`minilm` as path = the packaged all-MiniLM-L6-v2), or the dotted
path of a user's SimilarityMethod subclass, optionally followed by `:<argument>` passed to its constructor.
"""
from __future__ import annotations

from django.utils.module_loading import import_string

from core.errors import ApplicationError
from scoring.error_codes import UNKNOWN_METHOD

from .base import SimilarityMethod
from .neural import HfMeanSimilarity, NspSimilarity, SentenceTransformerSimilarity
from .simple import (
    Char3gramCasedSimilarity,
    Char3gramSimilarity,
    LevenshteinSimilarity,
    PosSimilarity,
    PunctuationExtendedSimilarity,
    PunctuationSimilarity,
    UppercaseSimilarity,
    WordLengthSimilarity,
    WordLengthWhitespaceSimilarity,
)

SIMPLE_METHODS: dict[str, type[SimilarityMethod]] = {
    cls.name: cls
    for cls in (Char3gramSimilarity, WordLengthSimilarity, PunctuationSimilarity, UppercaseSimilarity,
                LevenshteinSimilarity, PosSimilarity, Char3gramCasedSimilarity, PunctuationExtendedSimilarity,
                WordLengthWhitespaceSimilarity)
}
MODEL_METHODS: dict[str, type[SimilarityMethod]] = {
    "hf": HfMeanSimilarity, "st": SentenceTransformerSimilarity, "nsp": NspSimilarity,
}


def methods_parse(text: str) -> list[str]:
    """`a,b , c` → ['a', 'b', 'c']; duplicates and an empty list are errors."""
    specs = [part.strip() for part in (text or "").split(",") if part.strip()]
    if not specs:
        raise ApplicationError("Methods: give at least one method, e.g. char3gram,st:minilm", field="methods")
    duplicates = sorted({spec for spec in specs if specs.count(spec) > 1})
    if duplicates:
        raise ApplicationError(f"Methods: {', '.join(duplicates)} named more than once", field="methods")
    return specs


def methods_need_model(specs: list[str]) -> bool:
    """Whether any of the (checked) specs names a method that loads a model (`needs_model`): the built-in model
    methods, or a user's class that says so."""
    for spec in specs:
        prefix, colon, _ = spec.strip().partition(":")
        if spec.strip() in SIMPLE_METHODS:
            continue
        if colon and prefix in MODEL_METHODS:
            return True
        if "." in prefix:
            try:
                cls = import_string(prefix)
            except ImportError:
                continue  # method_create names the error
            if getattr(cls, "needs_model", False):
                return True
    return False


def method_create(spec: str, *, device: str = "auto") -> SimilarityMethod:
    """The method a spec names, with its model path checked (models themselves load on first use)."""
    spec = spec.strip()
    if spec in SIMPLE_METHODS:
        return SIMPLE_METHODS[spec](device="cpu")
    prefix, colon, argument = spec.partition(":")
    if colon and prefix in MODEL_METHODS:
        return MODEL_METHODS[prefix](device=device, argument=argument)
    if "." in prefix:
        try:
            cls = import_string(prefix)
        except ImportError as exc:
            raise ApplicationError(f"method '{spec}': cannot import {prefix}: {exc}", code=UNKNOWN_METHOD) from exc
        if not (isinstance(cls, type) and issubclass(cls, SimilarityMethod)):
            raise ApplicationError(f"method '{spec}': {prefix} is not a subclass of "
                                   "scoring.model_scoring.base.SimilarityMethod", code=UNKNOWN_METHOD)
        method = cls(device=device, argument=argument or None)
        method.name = spec
        return method
    known = ", ".join([*SIMPLE_METHODS, *(f"{p}:<model path>" for p in MODEL_METHODS), "<dotted.path.Class>"])
    raise ApplicationError(f"unknown method '{spec}'; known methods: {known}", code=UNKNOWN_METHOD)
