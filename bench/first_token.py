"""Time to the first answer token on the sample handbook; prints figures, asserts nothing.

    python bench/first_token.py [--repeat 2]

For each question (answers taken from examples/sample_text.py), with the default models loaded
once as a long-running caller would have them:
- first: seconds from the question to the first answer piece (retrieval, any model calls before
  the answer, focus, the answer itself);
- read: seconds the generator needs just to read the final answer prompt from an empty cache;
- ratio first / read (target <= 2), the prompt's size, and whether the answer is right.
Then one `longqa ask` in a fresh process (process start and model loads included).
Targets: first <= 1.5 s on an idle 2-core machine, and first <= 2 x read. The load
average is printed beside the figures: the machine may be shared.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SAMPLE = REPO / "examples" / "kestrel_valley_handbook.pdf"
QUESTIONS = [
    ("How long can the standby generators run the works before the diesel runs out?", "52 hours"),
    ("How many megalitres per day is the works licensed to abstract from the Kestrel River?", "68"),
    ("How many tonnes of cake left the site in 2023?", "2,300"),
    ("How long do the service reservoirs last at average demand?", "14 hours"),
    ("How often are the standby generators load tested?", "Monthly"),
    ("What was the electricity use per cubic metre in 2023?", "0.42"),
]


def load() -> str:
    return f"load average {os.getloadavg()[0]:.2f}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=2, help="times each question is asked (best kept)")
    args = parser.parse_args()

    from longqa.ask import Pipeline
    from longqa.ingest import Ingestor
    from longqa.models.resolve import load_embedder, load_generator
    from longqa.store import open_db

    work = Path(tempfile.mkdtemp(prefix="longqa-bench-"))
    db_path = work / "sample.db"
    generator, embedder = load_generator(), load_embedder()
    db = open_db(db_path)
    Ingestor(db=db, embedder=embedder).ingest(SAMPLE)
    pipeline = Pipeline(db, generator, embedder)
    print(f"threads {os.environ.get('LONGQA_THREADS', 'default')}; {load()} at start")
    print(f"{'first s':>8} {'read s':>7} {'ratio':>6} {'prompt tok':>10} {'model calls before':>18}  right  question")
    firsts, reads = [], []
    for question, expected in QUESTIONS:
        best = None
        for _ in range(max(1, args.repeat)):
            result = pipeline.answer(question)
            if best is None or result.timings.get("first_token", 1e9) < best.timings.get("first_token", 1e9):
                best = result
        prompt = best.refined.answer_prompt
        n = generator.count_tokens(prompt)
        generator.clear_cache()  # an empty cache: the whole prompt is read
        tick = time.perf_counter()
        generator.label_probs(prompt, ["a", "b"])
        read = time.perf_counter() - tick
        first = best.timings.get("first_token", float("nan"))
        calls = sum(1 for k in ("analysis", "evidence_probe", "outline") if best.timings.get(k, 0) > 0.05)
        right = expected.lower() in (best.answer or "").lower()
        firsts.append(first)
        reads.append(read)
        print(f"{first:8.2f} {read:7.2f} {first / read:6.1f} {n:10d} {calls:18d}  {'yes' if right else 'NO ':5}  {question}")
        print(f"{'':45}answer: {best.answer}")
    print(f"median first {statistics.median(firsts):.2f} s, median read {statistics.median(reads):.2f} s; {load()}")

    tick = time.perf_counter()
    cli = subprocess.run([sys.executable, "-m", "longqa", "ask", QUESTIONS[0][0], "-d", str(db_path)],
                         capture_output=True, text=True)
    print(f"fresh process `longqa ask`: {time.perf_counter() - tick:.2f} s wall (exit {cli.returncode}); {load()}")
    print("   " + cli.stdout.strip().splitlines()[0] if cli.stdout.strip() else cli.stderr.strip()[-200:])
    return 0


if __name__ == "__main__":
    sys.exit(main())
