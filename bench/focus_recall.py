"""Does the reader's window hold the answer? Prints a table; asserts nothing.

    python bench/focus_recall.py --work-dir DIR --results RESULTS.jsonl [-m MODEL] [--set KEY=VALUE ...]

The reader reads a few hundred tokens of sentences chosen from the refined context (the focus,
ask/answer/focus.py), not the context itself. An answer the context holds but the window drops
cannot be read. For each question of an evaluation run (its per-question results file names the
questions; each is asked of its dataset's store in DIR/stores, all documents, as `longqa eval`'s
corpus protocol does), this runs `ask` up to the reader's prompt and reports whether a gold
answer string is in the context and in the window (SQuAD-normalised, as `eval`'s answer recall),
the window's tokens, the prompt's tokens as the model counts them, a hash of the prompt the reader reads (questions whose hash differs
between two settings are those a setting changes), and the seconds. It needs no reader reply, so a half takes minutes, not the
half hour an evaluation with answers takes: a cheap check before that evaluation, not instead.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--work-dir", type=Path, required=True, help="an eval work dir (its stores/)")
    parser.add_argument("--results", type=Path, required=True, help="an eval run's per-question .jsonl")
    parser.add_argument("-m", "--model", default=None)
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                        help="an ask setting, as `longqa ask --set`")
    parser.add_argument("--out", type=Path, default=None, help="per-question rows as JSON lines")
    args = parser.parse_args()

    from longqa.ask.settings import DEFAULTS
    from longqa.eval.metrics import answer_in_context
    from longqa.models.resolve import load_embedder, load_generator
    from longqa import tokens
    from reader_plans import reader_plans

    settings = DEFAULTS.with_values(dict(item.split("=", 1) for item in args.set))
    generator = load_generator(args.model, None)
    embedder = load_embedder(None, None)
    rows = []
    started_load = os.getloadavg()
    for q, refined, plan, seconds in reader_plans(args.work_dir, args.results, generator, embedder, settings):
        qid, dataset = q["id"], q["dataset"]
        window = "\n".join(s.text for s in plan.focused)
        row = {"id": qid, "dataset": dataset,
               "in_context": answer_in_context(q["answers"], refined.context),
               "in_window": answer_in_context(q["answers"], window),
               "window_tokens": tokens.count(window), "seconds": round(seconds, 2),
               "prompt_tokens": generator.count_tokens(plan.prompt) if hasattr(generator, "count_tokens") else None,
               # which questions a setting changes: their reader reads another prompt
               "prompt_sha": hashlib.sha1(plan.prompt.encode()).hexdigest()[:12]}
        rows.append(row)
        print(json.dumps(row), flush=True)
    if args.out:
        args.out.write_text("".join(json.dumps(r) + "\n" for r in rows))
    counted = [r for r in rows if r["in_context"] is not None]
    in_context = sum(bool(r["in_context"]) for r in counted)
    kept = sum(bool(r["in_window"]) for r in counted if r["in_context"])
    window_only = sum(bool(r["in_window"]) for r in counted if not r["in_context"])
    print(f"\n{len(rows)} questions, {len(counted)} with a gold answer string to look for "
          f"(settings: {' '.join(args.set) or 'defaults'})")
    print(f"answer in the context: {in_context}; of those, in the reader's window: {kept} "
          f"({kept / max(1, in_context):.3f}); in the window only: {window_only}")
    prompts = [r["prompt_tokens"] for r in rows if r["prompt_tokens"] is not None]
    print(f"window tokens, mean: {sum(r['window_tokens'] for r in rows) / max(1, len(rows)):.0f}; "
          f"the reader's prompt tokens (the model's), mean: {sum(prompts) / max(1, len(prompts)):.0f}; "
          f"seconds per question, mean: {sum(r['seconds'] for r in rows) / max(1, len(rows)):.1f}")
    print(f"load average: {' '.join(f'{x:.2f}' for x in started_load)} at the start, "
          f"{' '.join(f'{x:.2f}' for x in os.getloadavg())} at the end")


if __name__ == "__main__":
    main()
