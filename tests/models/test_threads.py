"""Thread count for the model backends: the cores free right now, $LONGQA_THREADS overriding."""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import time

import pytest

from longqa.errors import ModelError
from longqa.models.threads import (
    busy_elsewhere, cgroup_cpu_quota, choose_threads, cores_within_quota, cpu_threads, processes_below_us,
    usable_cores,
)


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


@pytest.mark.skipif(not os.path.exists("/proc/loadavg"), reason="reads /proc")
@pytest.mark.skipif((os.cpu_count() or 1) < 2, reason="needs two CPUs for two spinning processes")
def test_niced_processes_beside_us_leave_their_cores_to_us(monkeypatch):
    monkeypatch.delenv("LONGQA_THREADS", raising=False)

    def busy_beside(code: str) -> float:
        spinners = [subprocess.Popen([sys.executable, "-c", code]) for _ in range(2)]
        try:
            time.sleep(0.3)  # started and spinning
            return statistics.median(busy_elsewhere() for _ in range(3))
        finally:
            for process in spinners:
                process.kill()
                process.wait()

    at_our_priority = busy_beside("while True: pass")
    niced = busy_beside("import os; os.nice(10)\nwhile True: pass")
    # Two spinners at our priority hold two cores; niced, they yield them to us.
    assert at_our_priority >= 1.5 and at_our_priority - niced >= 1.5


@pytest.mark.skipif(not os.path.exists("/proc/self/stat"), reason="reads /proc")
def test_a_niced_process_is_found_below_us_and_we_are_not():
    niced = subprocess.Popen([sys.executable, "-c", "import os, time; os.nice(5); print(1, flush=True); time.sleep(60)"],
                             stdout=subprocess.PIPE, text=True)
    try:
        niced.stdout.readline()  # reniced by now
        below = processes_below_us()
        assert niced.pid in below and os.getpid() not in below
    finally:
        niced.kill()
        niced.wait()


def test_a_cpu_quota_caps_the_cores():
    assert cores_within_quota(16, None) == 16
    assert cores_within_quota(16, 2.0) == 2
    assert cores_within_quota(16, 1.5) == 1  # the half core would only be throttled
    assert cores_within_quota(16, 0.5) == 1  # always one
    assert cores_within_quota(2, 8.0) == 2
    # Threads from the quota's cores, less those other work holds now.
    assert choose_threads(cores_within_quota(16, 4.0), 1.0) == 3
    assert choose_threads(cores_within_quota(16, 2.0), 2.6) == 1


def cgroup_tree(tmp_path, files: dict[str, str]):
    for name, text in files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def test_cgroup_v2_quota_is_the_tightest_on_the_way_up(tmp_path):
    mount = tmp_path / "unified"
    cgroup_tree(mount, {"cpu.max": "max 100000\n", "box/cpu.max": "400000 100000\n",
                        "box/job/cpu.max": "max 100000\n", "box/job/task/cpu.max": "250000 100000\n",
                        "other/cpu.max": "50000 100000\n"})
    mountinfo = f"30 25 0:26 / {mount} rw,relatime shared:5 - cgroup2 cgroup2 rw\n"
    assert cgroup_cpu_quota(mountinfo, "0::/box/job/task\n") == 2.5
    assert cgroup_cpu_quota(mountinfo, "0::/box/job\n") == 4.0
    assert cgroup_cpu_quota(mountinfo, "0::/\n") is None  # no limit at the root
    assert cgroup_cpu_quota(mountinfo, "0::/gone\n") is None  # a cgroup we cannot read


def test_cgroup_v1_quota_under_a_container_mount(tmp_path):
    # The container's own cgroup mounted as the root of its view (root field /docker/abc).
    mount = tmp_path / "cpu"
    cgroup_tree(mount, {"cpu.cfs_quota_us": "150000\n", "cpu.cfs_period_us": "100000\n"})
    mountinfo = (f"41 30 0:35 /docker/abc {mount} ro,nosuid - cgroup cgroup rw,cpu,cpuacct\n"
                 f"42 30 0:36 / {tmp_path / 'memory'} ro - cgroup cgroup rw,memory\n")
    assert cgroup_cpu_quota(mountinfo, "4:cpu,cpuacct:/docker/abc\n3:memory:/docker/abc\n") == 1.5
    (mount / "cpu.cfs_quota_us").write_text("-1\n")  # no quota
    assert cgroup_cpu_quota(mountinfo, "4:cpu,cpuacct:/docker/abc\n") is None
    assert cgroup_cpu_quota(mountinfo, "4:cpu,cpuacct:/elsewhere\n") is None  # not under this mount


@pytest.mark.skipif(not hasattr(os, "sched_getaffinity"), reason="no CPU affinity on this platform")
def test_this_machine_usable_cores_within_affinity():
    assert 1 <= usable_cores() <= max(len(os.sched_getaffinity(0)), 1)


def test_this_processes_own_running_threads_are_not_other_work():
    import threading

    import numpy as np

    from longqa.models.threads import own_running

    stop = threading.Event()
    matrix = np.random.default_rng(0).random((300, 300))

    def work():  # numpy releases the interpreter: this thread runs beside the asking one
        while not stop.is_set():
            matrix @ matrix

    worker = threading.Thread(target=work)
    worker.start()
    try:
        assert max(own_running() for _ in range(300)) >= 2  # the asking thread, the working one (and BLAS)
    finally:
        stop.set()
        worker.join()
