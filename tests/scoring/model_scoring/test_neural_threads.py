"""torch's CPU threads for the model methods: the cores idle now, read from /proc/stat over a short interval (not the
1-minute load average, which still counts a process that ended seconds ago), or STYLECROWD_TORCH_THREADS. No model
and no torch here: the choice is plain arithmetic on two samples."""
from __future__ import annotations

import os

import pytest

from scoring.model_scoring import neural
from scoring.model_scoring.neural import idle_cores, threads_for_idle_cores


def _no_sleep(_: float) -> None:
    return None


def test_idle_cores_from_two_samples_of_proc_stat():
    samples = iter([(1000, 4000), (1150, 4200)])  # over the interval: 150 of 200 jiffies idle on 2 cores
    assert idle_cores(cores=2, sample=lambda: next(samples), sleep=_no_sleep) == pytest.approx(1.5)
    samples = iter([(1000, 4000), (1000, 4200)])  # both cores busy the whole time
    assert idle_cores(cores=2, sample=lambda: next(samples), sleep=_no_sleep) == 0
    assert idle_cores(cores=2, sample=lambda: None, sleep=_no_sleep) is None  # no /proc/stat
    samples = iter([(1000, 4000), (1000, 4000)])  # no time passed: no answer rather than a division by zero
    assert idle_cores(cores=2, sample=lambda: next(samples), sleep=_no_sleep) is None


def test_idle_cores_reads_this_machine():
    idle = idle_cores(interval=0.05)
    assert idle is None or 0 <= idle <= (os.cpu_count() or 1) + 1e-9


@pytest.mark.parametrize(("idle", "threads"), [(2.0, 2), (1.6, 2), (1.4, 1), (0.2, 1), (0.0, 1), (7.5, 2)])
def test_torch_threads_are_the_idle_cores_between_one_and_the_cores(settings, idle, threads):
    settings.TORCH_THREADS = 0
    assert threads_for_idle_cores(idle, cores=2) == threads


def test_torch_threads_setting_wins_and_the_load_average_is_the_fallback(settings, monkeypatch):
    settings.TORCH_THREADS = 3
    assert threads_for_idle_cores(0.0, cores=2) == 3
    settings.TORCH_THREADS = 0
    monkeypatch.setattr(neural, "idle_cores", lambda **kwargs: None)  # no /proc/stat (not Linux)
    monkeypatch.setattr(neural.os, "getloadavg", lambda: (0.7, 0.0, 0.0))
    assert threads_for_idle_cores(cores=2) == 1
