"""`ask --context-only` on a quiet machine and beside busy processes, with the thread count
chosen from the free cores (the default) and with every core (the old default).

    python bench/threads.py [--runs 3] [--busy 2]

Ingests the sample handbook (examples/kestrel_valley_handbook.pdf) into bench/out/threads.db,
then runs `python -m longqa ask QUESTION --context-only` in fresh processes: without extra load
and with `--busy` spinning Python processes beside it, each with $LONGQA_THREADS unset (threads
from the cores free now, models/threads.py) and with $LONGQA_THREADS set to every core. Prints
the median wall and CPU seconds of each (children's rusage) with the load average. The machine
may be shared with other work: the "quiet" case then is only as quiet as the machine was.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
OUT = REPO / "bench" / "out"
SAMPLE = REPO / "examples" / "kestrel_valley_handbook.pdf"
QUESTION = "How long can the emergency generators run on the stored fuel?"


def longqa(*args: str, env: dict) -> tuple[float, float, int]:
    """(wall s, CPU s of the child, exit code) of one `python -m longqa ...`."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    tick = time.perf_counter()
    run = subprocess.run([sys.executable, "-m", "longqa", *args], env=env, capture_output=True, text=True)
    wall = time.perf_counter() - tick
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if run.returncode not in (0, 4):
        print(run.stderr[-1500:], file=sys.stderr)
    return wall, cpu, run.returncode


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--busy", type=int, default=2)
    args = parser.parse_args()
    OUT.mkdir(parents=True, exist_ok=True)
    store = OUT / "threads.db"
    base = {k: v for k, v in os.environ.items() if k != "LONGQA_THREADS"}
    base["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))
    wall, cpu, code = longqa("ingest", str(SAMPLE), "-d", str(store), "-q", env=base)
    if code != 0:
        return 1
    cores = os.cpu_count() or 1
    print(f"{cores} cores (shared machine); question: {QUESTION!r}")
    longqa("ask", QUESTION, "--context-only", "-d", str(store), env=base)  # warm the page cache
    for busy in (0, args.busy):
        spinners = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(busy)]
        try:
            time.sleep(1.0 if busy else 0)
            for label, env in (("threads from free cores", base),
                               (f"LONGQA_THREADS={cores}", {**base, "LONGQA_THREADS": str(cores)})):
                runs = [longqa("ask", QUESTION, "--context-only", "-d", str(store), env=env)
                        for _ in range(args.runs)]
                print(f"{busy} busy beside it, {label:>24}: wall {statistics.median(r[0] for r in runs):5.2f} s, "
                      f"CPU {statistics.median(r[1] for r in runs):5.2f} s (median of {args.runs}); "
                      f"load {os.getloadavg()[0]:.1f}", flush=True)
        finally:
            for process in spinners:
                process.kill()
                process.wait()
    return 0


if __name__ == "__main__":
    sys.exit(main())
