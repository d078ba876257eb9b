"""The method registry: a spec string → a SimilarityMethod instance.

Specs: a built-in name (`char3gram`, `word_length`, `punctuation`, `uppercase`, `levenshtein`, `pos`), a model
method `hf:<path>`, `st:<path>` or `nsp:<path>` (`minilm` as path = the packaged all-MiniLM-L6-v2), or the dotted
path of a user's SimilarityMethod subclass, optionally followed by `:<argument>` passed to its constructor.
"""
from __future__ import annotations

from django.utils.module_loading import import_string

from core.errors import ApplicationError
from core.languages import primary_language
from scoring.error_codes import UNKNOWN_METHOD, UNSUPPORTED_LANGUAGE

from .base import SimilarityMethod
from .neural import MODEL_ALIASES, HfMeanSimilarity, NspSimilarity, SentenceTransformerSimilarity
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


def methods_describe() -> list[dict[str, object]]:
    """Every built-in method with its languages ("*": any, language-independent) and whether it loads a model."""
    simple = [{"name": name, "languages": list(cls.languages), "needs_model": cls.needs_model}
              for name, cls in SIMPLE_METHODS.items()]
    models = [{"name": f"{prefix}:<model directory>", "languages": ["*"], "needs_model": True,
               "note": "the model's languages: give a multilingual model's local directory for another language than "
                       "English; the packaged `minilm` is English"} for prefix in MODEL_METHODS]
    return [*simple, *models]


def method_languages(spec: str) -> tuple[str, ...]:
    """The languages a spec's method is made for, read before anything loads: a built-in's `languages`, a model
    method's model (`minilm`, the packaged all-MiniLM-L6-v2, is English; another directory: "*", its model's), a
    user's class's `languages`."""
    spec = spec.strip()
    if spec in SIMPLE_METHODS:
        return SIMPLE_METHODS[spec].languages
    prefix, colon, argument = spec.partition(":")
    if colon and prefix in MODEL_METHODS:
        return ("en",) if argument in MODEL_ALIASES else MODEL_METHODS[prefix].languages
    try:
        return tuple(getattr(import_string(prefix), "languages", ("*",)))
    except ImportError:
        return ("*",)  # method_create names the error


def methods_language_check(*, specs: list[str], language: str) -> None:
    """Refuse a method made for other languages than the benchmark's `language` (BCP 47), as
    `metrics_language_check` refuses a metric (the same `unsupported_language` code)."""
    for spec in specs:
        supported = method_languages(spec)
        if "*" in supported or primary_language(language) in {primary_language(s) for s in supported}:
            continue
        raise ApplicationError(
            f"method {spec.strip()!r} supports {', '.join(supported)} only; this benchmark's texts are {language}: "
            "choose a language-independent method (char3gram, punctuation, levenshtein, …; score_stel --list) or a "
            "model that knows the language (st:<directory of a multilingual model>)",
            code=UNSUPPORTED_LANGUAGE, field="methods")
