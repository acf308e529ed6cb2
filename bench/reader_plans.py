"""The reader's plan for each question of an evaluation run, asked as `longqa eval`'s corpus protocol
asks it (of its dataset's store in WORK_DIR/stores, all documents), up to the prompt the reader
reads and no further: the shared part of the benches that look at the reader's window or prompt
without running a whole evaluation."""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path
from typing import Iterator

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
EVALDATA = Path(os.environ.get("LONGQA_EVALDATA", REPO.parent / "shared" / "evaldata"))


def reader_plans(work_dir: Path, results: Path, generator, embedder, settings) -> Iterator[tuple[dict, object, object, float]]:
    """(question as in dev.jsonl, its refined context, the answer stage's plan, seconds to make
    them) for each question the run's per-question results file names, in its order; questions
    whose dataset has no store in `work_dir` are skipped."""
    from longqa.ask.answer.stage import plan_answer
    from longqa.ask.analysis.asked import read as read_asked
    from longqa.ask.pipeline import Pipeline
    from longqa.ask.settings import applied
    from longqa.store import open_db

    if not (EVALDATA / "dev.jsonl").exists():
        sys.exit(f"no questions at {EVALDATA / 'dev.jsonl'} (set LONGQA_EVALDATA)")
    gold = {q["id"]: q for q in map(json.loads, (EVALDATA / "dev.jsonl").open())}
    ids = [json.loads(line)["id"] for line in results.open() if line.strip()]
    pipelines: dict[str, Pipeline] = {}
    for qid in ids:
        q = gold[qid]
        dataset = q["dataset"]
        if dataset not in pipelines:
            stores = sorted((work_dir / "stores").glob(f"{dataset}-*.db"))
            if not stores:
                continue
            pipelines[dataset] = Pipeline(open_db(stores[0]), generator, embedder, budget=2000, settings=settings)
        pipeline = pipelines[dataset]
        tick = time.perf_counter()
        refined = pipeline.retrieve_context(q["question"])
        asked = refined.analysis.asked or read_asked(refined.question)
        with applied(pipeline.ask_settings):
            plan = plan_answer(asked, refined.passages, refined.analysis.type, refined.analysis.scope,
                               embedder, None, generator)
        yield q, refined, plan, time.perf_counter() - tick
