"""How many threads the model backends use: the cores other work leaves free right now.

llama.cpp's threads wait for each other at every step, spinning; when other processes hold the
cores, one late thread stalls the rest, and more threads make a step slower (on the shared 2-core
development machine `ask --context-only` took 15.5 s with 2 threads beside three busy processes
and 3.3 s with one). So the count is taken from the processes runnable right now, sampled from
/proc/loadavg a few times over ~20 ms (the 1-minute load average lags by a minute: it would keep
a freshly idle machine at one thread and miss work that just started). $LONGQA_THREADS overrides.
"""

from __future__ import annotations

import os
import sys
import time

from longqa import environment

SAMPLES = 5  # readings of the runnable count, SAMPLE_GAP_S apart
SAMPLE_GAP_S = 0.004


def usable_cores() -> int:
    """Cores this process may run on (affinity and container CPU sets respected)."""
    try:
        return max(len(os.sched_getaffinity(0)), 1)
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def busy_elsewhere(samples: int = SAMPLES, gap: float = SAMPLE_GAP_S) -> float | None:
    """Mean number of other runnable threads (ours excluded) over a few readings of
    /proc/loadavg; None where the system does not expose it."""
    readings = []
    for i in range(samples):
        try:
            with open("/proc/loadavg", encoding="ascii") as handle:
                running = int(handle.read().split()[3].split("/")[0])
        except (OSError, ValueError, IndexError):
            return None
        readings.append(max(running - 1, 0))  # the reading thread itself is running
        if i + 1 < samples:
            time.sleep(gap)
    return sum(readings) / len(readings)


def choose_threads(cores: int, busy: float | None) -> int:
    """Cores left free by `busy` other runnable threads, at least one."""
    if busy is None:
        return cores
    return max(1, min(cores, cores - int(busy + 0.5)))


_warned: set[int] = set()


def cpu_threads() -> int:
    """$LONGQA_THREADS when set (at most the usable cores: more threads only wait for each other,
    and each costs memory), else the cores free right now (choose_threads)."""
    value = environment.threads()
    cores = usable_cores()
    if value is not None:
        if value > cores:
            if value not in _warned:  # once per process, though every model asks
                _warned.add(value)
                print(f"longqa: warning: LONGQA_THREADS={value} is more than the {cores} cores this "
                      f"process may use; using {cores}", file=sys.stderr)
            return cores
        return value
    return choose_threads(cores, busy_elsewhere())
