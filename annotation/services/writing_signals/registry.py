"""The writing signals' definitions, once: what each measures, its unit, its default threshold and which side of
the threshold flags a rewrite. Thresholds are set per study (`RewriteSettings.signal_thresholds`); a name left out
takes its default here, `null` switches the signal off."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from annotation.models import Signal
from core.errors import ApplicationError


@dataclass(frozen=True)
class SignalSpec:
    signal: Signal
    unit: str
    default: float | None  # None: off unless the researcher sets a threshold
    low: float  # the range a threshold may take
    high: float
    flags_below: bool = False  # True: a score at or below the threshold flags (the LM statistic)
    needs: str = ""  # what must be configured for the signal to be computed at all

    @property
    def label(self) -> str:
        return self.signal.label

    def flags(self, score: float, threshold: float) -> bool:
        return score <= threshold if self.flags_below else score >= threshold


SPECS: dict[str, SignalSpec] = {spec.signal.value: spec for spec in (
    SignalSpec(Signal.TELEMETRY_INCONSISTENT, "problems found by the server's consistency check", 1, 1, 100),
    SignalSpec(Signal.MOSTLY_PASTED, "share of the text's characters pasted from outside the page", 0.5, 0.01, 1),
    SignalSpec(Signal.TYPING_SPEED, "characters typed per second of typing", 15.0, 1, 1000),
    SignalSpec(Signal.FOCUS_LOSS_INSERT, "seconds away from the page before a large insertion", 20.0, 1, 86400),
    SignalSpec(Signal.NEAR_DUPLICATE, "similarity (0-100) with another writer's rewrite of the source", 90.0, 1,
               100),
    SignalSpec(Signal.LLM_LIKENESS, "log-perplexity over mean entropy under a local language model (lower: more "
               "predictable)", 0.9, 0.01, 10, flags_below=True, needs="a local causal language model"),
    SignalSpec(Signal.MODEL_SIMILARITY, "similarity (0-100) with a model's own rewrite of the source", 85.0, 1, 100,
               needs="a model endpoint"),
)}
# Parameters beside the thresholds, with theirs defaults and ranges.
PARAMETERS: dict[str, tuple[float, float, float, str]] = {
    "focus_loss_insert_chars": (20, 2, 5000, "characters inserted at once that count as a large insertion"),
}
TYPING_MIN_CHARS = 20  # fewer typed characters: no speed is measured (a burst of one word says little)
FOCUS_INSERT_WINDOW_MS = 30_000  # the insertion must follow the return to the page within this
NEAR_DUPLICATE_MIN_CHARS = 20  # shorter rewrites of one source coincide by themselves ("I do not know.")


def thresholds_validate(raw: Any, *, field: str = "signal_thresholds") -> dict[str, float | None]:
    """A study's thresholds as given (names checked, numbers in range); ApplicationError naming the entry."""
    if raw in (None, ""):
        return {}
    if not isinstance(raw, dict):
        raise ApplicationError('Signal thresholds must be an object {"signal": number or null}.', field=field)
    known = {**SPECS, **PARAMETERS}
    out: dict[str, float | None] = {}
    for name, value in raw.items():
        if name not in known:
            raise ApplicationError(f"Signal thresholds: unknown name {str(name)[:40]!r}; the names are "
                                   f"{sorted(known)}.", field=field)
        if value is None and name in SPECS:
            out[name] = None
            continue
        low, high = (SPECS[name].low, SPECS[name].high) if name in SPECS else PARAMETERS[name][1:3]
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not low <= value <= high:
            raise ApplicationError(f"Signal thresholds: {name} must be a number from {low:g} to {high:g}"
                                   f"{' or null (off)' if name in SPECS else ''}, not {value!r}.", field=field)
        out[name] = float(value)
    return out


def thresholds_parse(pairs: list[str], *, field: str = "signal_thresholds") -> dict[str, float | None]:
    """NAME=VALUE strings (the CLI's --signal-threshold; VALUE `off` switches a signal off), validated."""
    raw: dict[str, Any] = {}
    for pair in pairs:
        name, sep, value = pair.partition("=")
        if not sep:
            raise ApplicationError(f"Signal thresholds: expected NAME=VALUE, not {pair!r}.", field=field)
        try:
            raw[name.strip()] = None if value.strip().lower() in ("off", "none", "null") else float(value)
        except ValueError:
            raise ApplicationError(f"Signal thresholds: {name.strip()} needs a number or off, not {value!r}.",
                                   field=field) from None
    return thresholds_validate(raw, field=field)


def thresholds_resolve(saved: dict[str, Any] | None) -> dict[str, float | None]:
    """Every signal's threshold and every parameter: the study's, else the default."""
    saved = saved or {}
    out: dict[str, float | None] = {name: saved.get(name, spec.default) for name, spec in SPECS.items()}
    out.update({name: float(saved.get(name, default[0])) for name, default in PARAMETERS.items()})
    return out


def auto_reject_validate(raw: Any, *, field: str = "signal_auto_reject") -> list[str]:
    """The signals whose flag rejects a pending rewrite without a reviewer (the researcher's rule)."""
    if raw in (None, ""):
        return []
    if isinstance(raw, str):
        raw = [name.strip() for name in raw.split(",") if name.strip()]
    if not isinstance(raw, list) or not all(isinstance(name, str) for name in raw):
        raise ApplicationError("Signal auto-reject must be a list of signal names.", field=field)
    unknown = sorted(set(raw) - set(SPECS))
    if unknown:
        raise ApplicationError(f"Signal auto-reject: unknown signal(s) {unknown[:5]}; the signals are "
                               f"{sorted(SPECS)}.", field=field)
    return sorted(set(raw), key=list(SPECS).index)
