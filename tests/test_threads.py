"""Thread count for the model backends: the cores free right now, $LONGQA_THREADS overriding."""

from __future__ import annotations

import subprocess
import sys

import pytest

from longqa.errors import ModelError
from longqa.models.threads import busy_elsewhere, choose_threads, cpu_threads, usable_cores


def test_free_cores_leave_at_least_one_thread():
    assert choose_threads(2, 0.0) == 2
    assert choose_threads(2, 0.4) == 2
    assert choose_threads(2, 1.0) == 1
    assert choose_threads(2, 3.0) == 1
    assert choose_threads(8, 2.6) == 5
    assert choose_threads(4, None) == 4  # nothing known: every core


def test_environment_overrides_and_bad_values_are_refused(monkeypatch):
    monkeypatch.setenv("LONGQA_THREADS", "1")
    assert cpu_threads() == 1
    for bad in ("many", "0", "-1"):
        monkeypatch.setenv("LONGQA_THREADS", bad)
        with pytest.raises(ModelError, match="LONGQA_THREADS"):
            cpu_threads()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/loadavg")
def test_busy_processes_beside_us_take_cores_away(monkeypatch):
    monkeypatch.delenv("LONGQA_THREADS", raising=False)
    cores = usable_cores()
    spinners = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(2)]
    try:
        assert busy_elsewhere() >= 2  # a spinning loop is always runnable
        assert cpu_threads() <= max(1, cores - 2)
    finally:
        for process in spinners:
            process.kill()
            process.wait()
