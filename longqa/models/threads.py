"""How many threads the model backends use: the cores other work leaves free right now.

llama.cpp's threads wait for each other at every step, spinning; when other processes hold the
cores, one late thread stalls the rest, and more threads make a step slower (on the shared 2-core
development machine `ask --context-only` took 15.5 s with 2 threads beside three busy processes
and 3.3 s with one). So the count is taken from the processes runnable right now, sampled from
/proc/loadavg a few times over ~20 ms (the 1-minute load average lags by a minute: it would keep
a freshly idle machine at one thread and miss work that just started). Work at a lower priority
than ours (an `ingest`, which runs niced) yields its cores to us, so its runnable threads are not
counted: beside a niced ingest an `ask` took 1.05x its idle time with both cores, 1.5-1.7x when it
kept to one (bench/RESULTS.md). $LONGQA_THREADS overrides.

The cores counted are those this process may use: its CPU affinity, and a container's CPU quota
(cgroup v2 cpu.max, v1 cpu.cfs_quota_us), which affinity does not show: a container limited to 2
CPUs of a 16-core host sees 16 in its affinity, and 16 threads there only wait for their turn.
"""

from __future__ import annotations

import contextlib
import math
import os
import sys
import time
from pathlib import Path

from longqa import environment

SAMPLES = 5  # readings of the runnable count, SAMPLE_GAP_S apart
SAMPLE_GAP_S = 0.004


def usable_cores() -> int:
    """Cores this process may run on: its affinity (container CPU sets included), capped by a
    CPU quota on its cgroup."""
    try:
        cores = max(len(os.sched_getaffinity(0)), 1)
    except (AttributeError, OSError):
        cores = os.cpu_count() or 1
    return cores_within_quota(cores, cgroup_cpu_quota())


def cores_within_quota(cores: int, quota: float | None) -> int:
    """At most the whole cores a quota of `quota` CPUs pays for (at least one): a thread past the
    quota is throttled, and llama.cpp's other threads wait for it."""
    if quota is None:
        return cores
    return max(1, min(cores, math.floor(quota + 1e-9)))


def cgroup_cpu_quota(mountinfo: str | None = None, cgroups: str | None = None) -> float | None:
    """The tightest CPU quota, in CPUs, on this process's cgroup and its parents (cgroup v2
    cpu.max, v1 cpu.cfs_quota_us / cpu.cfs_period_us); None without one, or off Linux.
    `mountinfo` and `cgroups` are the texts of /proc/self/mountinfo and /proc/self/cgroup."""
    try:
        mountinfo = mountinfo if mountinfo is not None else Path("/proc/self/mountinfo").read_text()
        cgroups = cgroups if cgroups is not None else Path("/proc/self/cgroup").read_text()
    except OSError:
        return None
    v2_path, v1_path = None, None
    for line in cgroups.splitlines():  # "0::/path" (v2), "4:cpu,cpuacct:/path" (v1)
        parts = line.split(":", 2)
        if len(parts) == 3 and parts[0] == "0" and parts[1] == "":
            v2_path = parts[2]
        elif len(parts) == 3 and "cpu" in parts[1].split(","):
            v1_path = parts[2]
    quotas = []
    for line in mountinfo.splitlines():
        fields, _, tail = line.partition(" - ")
        fields, tail = fields.split(), tail.split()
        if len(fields) < 5 or len(tail) < 3:
            continue
        root, mount, kind, options = fields[3], Path(fields[4]), tail[0], tail[2].split(",")
        if kind == "cgroup2" and v2_path is not None:
            quotas += _quotas_up(mount, root, v2_path, _v2_quota)
        elif kind == "cgroup" and "cpu" in options and v1_path is not None:
            quotas += _quotas_up(mount, root, v1_path, _v1_quota)
    return min(quotas) if quotas else None


def _quotas_up(mount: Path, root: str, path: str, read) -> list[float]:
    """The quotas `read` finds in the cgroup at `path` and each parent up to the mount's root."""
    relative = os.path.relpath(path, root) if root != "/" else path.lstrip("/")
    if relative.startswith(".."):  # the process's cgroup is not under this mount
        return []
    folder, quotas = Path(os.path.normpath(mount / relative)), []
    while True:
        quota = read(folder)
        if quota is not None:
            quotas.append(quota)
        if folder == mount or mount not in folder.parents:
            return quotas
        folder = folder.parent


def _v2_quota(folder: Path) -> float | None:
    try:
        limit, period = (folder / "cpu.max").read_text().split()[:2]
        return None if limit == "max" or int(period) <= 0 else int(limit) / int(period)
    except (OSError, ValueError):
        return None


def _v1_quota(folder: Path) -> float | None:
    try:
        limit = int((folder / "cpu.cfs_quota_us").read_text())
        period = int((folder / "cpu.cfs_period_us").read_text())
    except (OSError, ValueError):
        return None
    return limit / period if limit > 0 and period > 0 else None


def busy_elsewhere(samples: int = SAMPLES, gap: float = SAMPLE_GAP_S) -> float | None:
    """Mean number of other processes' runnable threads over a few readings of /proc/loadavg, less
    ours and those of processes below our priority (they yield to us: an `ingest` runs niced);
    None where the system does not expose it."""
    readings = []
    below = processes_below_us()
    for i in range(samples):
        try:
            with open("/proc/loadavg", encoding="ascii") as handle:
                running = int(handle.read().split()[3].split("/")[0])
        except (OSError, ValueError, IndexError):
            return None
        yielding = sum(running_threads(Path(f"/proc/{pid}/task")) for pid in below)
        readings.append(max(running - own_running() - yielding, 0))
        if i + 1 < samples:
            time.sleep(gap)
    return sum(readings) / len(readings)


def _stat_fields(text: str) -> list[str]:
    """A /proc stat line's fields after the command name (which may hold spaces and brackets):
    [0] is the state, [16] the nice value."""
    return text.rsplit(")", 1)[-1].split()


def processes_below_us() -> list[int]:
    """Processes running at a lower priority than this one (a higher nice value)."""
    try:
        ours = os.getpriority(os.PRIO_PROCESS, 0)
    except (AttributeError, OSError):
        return []
    found = []
    with contextlib.suppress(OSError):
        for entry in os.scandir("/proc"):
            if not entry.name.isdigit():
                continue
            with contextlib.suppress(OSError, ValueError, IndexError):
                if nice_of(entry.name) > ours:
                    found.append(int(entry.name))
    return found


def nice_of(pid: int | str) -> int:
    """A process's nice value, from /proc/PID/stat (OSError, ValueError or IndexError where it
    cannot be read)."""
    with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as handle:
        return int(_stat_fields(handle.read())[16])


def running_threads(tasks: Path) -> int:
    """Threads of one process (its /proc/PID/task folder) runnable now."""
    count = 0
    with contextlib.suppress(OSError):
        for stat in tasks.glob("*/stat"):
            with contextlib.suppress(OSError, IndexError):
                count += _stat_fields(stat.read_text(encoding="ascii", errors="replace"))[0] == "R"
    return count


def own_running() -> int:
    """This process's threads running now (at least the one asking): `ask` loads its generator on a
    thread while retrieval runs, and its own work is not other work that leaves fewer cores."""
    return max(running_threads(Path("/proc/self/task")), 1)


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
