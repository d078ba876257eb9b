"""The interface every style-similarity method implements."""
from __future__ import annotations

import contextlib
import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator, Sequence

import numpy as np

# (done, total): services pass one in; methods that take a while call it.
Progress = Callable[[int, int], None]


def _no_progress(done: int, total: int) -> None:
    return None


class SimilarityMethod(ABC):
    """Similarity of two equally long lists of sentences, pair by pair.

    `similarity(a, b)[i]` is the similarity of `a[i]` and `b[i]`, a float in `value_range` (either (0, 1) or
    (-1, 1)); higher means "more alike in style". The scorer calls `similarity` once per run with every pair it
    needs, so an implementation can encode each distinct sentence exactly once.

    A user's own method is any subclass importable by dotted path; its constructor gets the keyword arguments
    `device` and `argument` (the text after `name:` in the spec, or None) and may ignore them.
    """

    name: str = ""
    value_range: tuple[float, float] = (0.0, 1.0)
    # Whether the method loads a model: a run with such a method goes to the `gpu` queue, any other run to the
    # default queue (scoring.model_scoring.runs). A user's method that loads one sets it to True.
    needs_model: bool = False
    # BCP-47 primary tags of the languages the method is made for, as a metric's (scoring/metric_evaluation/base.py):
    # "*" = any (lexical and character methods, or a model method whose languages are its model's: the model directory
    # a user gives decides, e.g. a multilingual sentence encoder).
    languages: tuple[str, ...] = ("*",)

    def __init__(self, *, device: str = "cpu", argument: str | None = None) -> None:
        self.device = device
        self.argument = argument
        # Seconds of one-time start-up (a library's first import, a model's load) spent inside `similarity` calls:
        # the scorer reports them apart from the method's own time (`startup_s` beside `seconds`).
        self.startup_seconds = 0.0

    @contextlib.contextmanager
    def starting(self) -> Iterator[None]:
        """Time a one-time start-up step (`with self.starting(): import heavy_library`) as start-up, not work."""
        began = time.perf_counter()
        try:
            yield
        finally:
            # getattr: a user's subclass may not call this __init__
            self.startup_seconds = getattr(self, "startup_seconds", 0.0) + time.perf_counter() - began

    @abstractmethod
    def similarity(self, a: Sequence[str], b: Sequence[str], *, progress: Progress = _no_progress) -> np.ndarray:
        raise NotImplementedError

    def close(self) -> None:
        """Free model memory once the run is done (neural methods override)."""
        return None
