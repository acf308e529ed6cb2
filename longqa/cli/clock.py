"""Seconds since this process started: what a shell user has waited for so far.

`ask --json` reports its first answer piece and its end on this clock, so the figures include
the interpreter's start, the imports and the model loads that a fresh process pays for."""

from __future__ import annotations

import os
import time


def _process_age() -> float:
    """How long ago the kernel started this process (10 ms resolution); 0 where /proc is absent."""
    try:
        with open("/proc/self/stat", encoding="ascii", errors="replace") as handle:
            fields = handle.read().rsplit(")", 1)[1].split()  # the command name may hold spaces
        started = int(fields[19]) / os.sysconf("SC_CLK_TCK")  # field 22: start, ticks after boot
        return max(0.0, time.clock_gettime(time.CLOCK_BOOTTIME) - started)
    except (OSError, IndexError, ValueError, AttributeError):
        return 0.0


# The process's start on the perf_counter clock (where it cannot be read: this module's import).
STARTED = time.perf_counter() - _process_age()


def since_start() -> float:
    return time.perf_counter() - STARTED
