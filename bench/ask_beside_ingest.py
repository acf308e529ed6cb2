"""A fresh `longqa ask` while a `longqa ingest` runs, against the same ask on an idle machine.

    python bench/ask_beside_ingest.py [--runs 3] [--nice 0,10] [--ask-threads N] [--docs FILE_OR_DIR ...]

Ingests the sample handbook into a temporary store, then times the quick-start question's `ask`
(a fresh process each run, the default profile) --runs times idle; then, for each ingest priority
in --nice, the same asks while `longqa ingest --nice N` stores --docs into another store (started
again into a fresh store whenever it ends, so every ask runs wholly beside an ingest; the ingest
gets a few seconds to reach its embedding first). Prints each setting's median wall time, its
ratio to the idle median, and the load average beside it. --docs defaults to the evaluation's
FinanceBench filings (../shared/evaldata/docs/financebench), which a clone without ../shared/
does not have: name some documents of your own there. --ask-threads sets the asks' threads
($LONGQA_THREADS) instead of letting them choose from the cores free.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from fresh_ask import QUESTION, REPO, SAMPLE, load, timed  # noqa: E402

FILINGS = REPO.parent / "shared" / "evaldata" / "docs" / "financebench"


class IngestKeptRunning:
    """`longqa ingest --nice N DOCS` in the background, started again into a fresh store each time
    it ends, until stopped."""

    def __init__(self, docs: list[str], nice: int, folder: Path, env: dict):
        self.docs, self.nice, self.folder, self.env = docs, nice, folder, env
        self.stopping = threading.Event()
        self.process: subprocess.Popen | None = None
        self.restarts = 0
        self.thread = threading.Thread(target=self._keep, daemon=True)

    def _keep(self) -> None:
        while not self.stopping.is_set():
            store = self.folder / f"ingest-{self.nice}-{self.restarts}.db"
            argv = [sys.executable, "-m", "longqa", "ingest", *self.docs, "-d", str(store), "--quiet",
                    "--nice", str(self.nice)]
            self.process = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=self.env)
            while self.process.poll() is None and not self.stopping.is_set():
                time.sleep(0.1)
            if self.process.poll() is None:
                self.process.kill()
            self.process.wait()
            self.restarts += 1

    def __enter__(self):
        self.thread.start()
        time.sleep(8)  # past the imports and the first parse: the embedder is at work
        return self

    def __exit__(self, *exc):
        self.stopping.set()
        self.thread.join()


def asks(argv: list[str], env: dict, runs: int) -> list[float]:
    return [timed(argv, env)[0] for _ in range(runs)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--nice", default="0,10", help="ingest priorities to try (`ingest --nice N`), comma-separated")
    parser.add_argument("--ask-threads", type=int, help="the asks' $LONGQA_THREADS (default: chosen from the cores free)")
    parser.add_argument("--docs", nargs="+", default=[str(FILINGS)] if FILINGS.exists() else None)
    args = parser.parse_args()
    if not args.docs:
        raise SystemExit(f"no documents to ingest: {FILINGS} is absent; name some with --docs")
    env = {**os.environ}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env.pop("LONGQA_THREADS", None)  # each process chooses its threads from the cores free, as a user's does
    folder = Path(tempfile.mkdtemp(prefix="longqa-beside-"))
    try:
        store = folder / "handbook.db"
        subprocess.run([sys.executable, "-m", "longqa", "ingest", str(SAMPLE), "-d", str(store), "--quiet"],
                       check=True, env=env)
        argv = [sys.executable, "-m", "longqa", "ask", QUESTION, "-d", str(store)]
        ask_env = {**env, "LONGQA_THREADS": str(args.ask_threads)} if args.ask_threads else env
        timed(argv, ask_env)  # a first run writes the bytecode caches and the kept prompt heads
        idle = asks(argv, ask_env, args.runs)
        base = statistics.median(idle)
        print(f"idle                    ask wall p50 {base:5.2f} s  runs {', '.join(f'{w:.1f}' for w in idle)}  ({load()})")
        for nice in (int(n) for n in args.nice.split(",")):
            with IngestKeptRunning(args.docs, nice, folder, env) as ingest:
                walls = asks(argv, ask_env, args.runs)
                shown = load()
            median = statistics.median(walls)
            print(f"beside ingest --nice {nice:<2d} ask wall p50 {median:5.2f} s  {median / base:.2f}x idle  "
                  f"runs {', '.join(f'{w:.1f}' for w in walls)}  (ingest started {ingest.restarts} times; {shown})",
                  flush=True)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
