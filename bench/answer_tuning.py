"""Tune the answer stage on one half of the dev questions: longqa's own answers and their F1.

    LONGQA_THREADS=1 python bench/answer_tuning.py ../shared/evaldata/dev.jsonl --half tune --limit 120 \
        --work-dir /work/evalrun-tune --out /work/evalrun-tune/answers-A.json [--compare answers-0.json]

Every generator call is memoised on disk (work-dir/memo.sqlite, keyed on the call and its prompt),
so a second run that changes only the rules re-asks the model only where a prompt or an option list
changed. Prints token F1 and EM by dataset with the load average, and with --compare the questions
whose F1 moved. Thresholds are tuned on the tune half; report figures come from `longqa eval --half
report`.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib
import json
import os
import sqlite3
import sys
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from longqa.ask.answer import grounded  # noqa: E402
from longqa.eval.metrics import answer_in_context  # noqa: E402
from longqa.eval.runner import EvalSettings, Runner  # noqa: E402
from longqa.eval.systems import Resources, make_system  # noqa: E402
from longqa.models.resolve import load_embedder, load_generator  # noqa: E402


class MemoGenerator:
    """A generator whose answers are remembered on disk, call by call."""

    def __init__(self, inner, path: Path):
        self.inner = inner
        self.name, self.n_ctx = inner.name, inner.n_ctx
        self.db = sqlite3.connect(path)
        self.db.execute("CREATE TABLE IF NOT EXISTS memo (key TEXT PRIMARY KEY, value TEXT)")
        self.hits = self.misses = 0

    def _call(self, method: str, args: tuple, kwargs: dict, compute):
        key = hashlib.sha1(json.dumps([self.name, method, args, sorted(kwargs.items())], default=str)
                           .encode()).hexdigest()
        row = self.db.execute("SELECT value FROM memo WHERE key = ?", (key,)).fetchone()
        if row is not None:
            self.hits += 1
            return json.loads(row[0])
        self.misses += 1
        value = compute()
        self.db.execute("INSERT OR REPLACE INTO memo VALUES (?, ?)", (key, json.dumps(value)))
        self.db.commit()
        return value

    def count_tokens(self, text: str) -> int:
        return self.inner.count_tokens(text)

    def complete(self, prompt: str, **kwargs) -> str:
        return self._call("complete", (prompt,), kwargs, lambda: self.inner.complete(prompt, **kwargs))

    def stream(self, prompt: str, **kwargs):
        yield from self._call("stream", (prompt,), kwargs, lambda: list(self.inner.stream(prompt, **kwargs)))

    def label_probs(self, prompt: str, labels: list[str]) -> dict[str, float]:
        return self._call("label_probs", (prompt, labels), {}, lambda: self.inner.label_probs(prompt, labels))

    def option_logprobs(self, prompt: str, options: list[str], **kwargs) -> list[float]:
        return self._call("option_logprobs", (prompt, options), kwargs,
                          lambda: self.inner.option_logprobs(prompt, options, **kwargs))

    def __getattr__(self, name):
        return getattr(self.inner, name)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("questions", type=Path)
    parser.add_argument("--half", default="tune")
    parser.add_argument("--limit", type=int, default=120)
    parser.add_argument("--datasets", default="hotpotqa,musique,uda,leval,lciteeval")
    parser.add_argument("--structure", default="layout")
    parser.add_argument("--work-dir", type=Path, required=True)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--compare", type=Path)
    parser.add_argument("--set", action="append", default=[], metavar="MODULE.NAME=VALUE",
                        help="override a module constant for this run, e.g. grounded.W_MODEL=0.5")
    args = parser.parse_args()
    for assignment in args.set:  # a tuning experiment: the answer stage reads these at call time
        target, value = assignment.split("=", 1)
        module_name, name = target.rsplit(".", 1)
        module = importlib.import_module(f"longqa.ask.{module_name}")
        setattr(module, name, type(getattr(module, name))(value))
    args.work_dir.mkdir(parents=True, exist_ok=True)
    chosen: dict[str, dict] = {}  # question -> the draft and the best candidates, for --out
    choose_short = grounded.choose_short

    def recording(generator, question, *rest, **kwargs):
        text, grounding = choose_short(generator, question, *rest, **kwargs)
        best = sorted(grounding.focused or [], key=lambda s: -s.score)[:3]
        chosen[" ".join(question.split())] = {"draft": grounding.draft, "mode": grounding.mode,
                            "candidates": [(c["text"], c["score"], c["model"], c["prior"]) for c in grounding.candidates[:8]],
                            "sentences": [" ".join(s.text.split()) for s in best],
                            "focused": " ".join(" ".join(s.text.split()) for s in grounding.focused or [])}
        return text, grounding

    grounded.choose_short = recording

    generator = MemoGenerator(load_generator(None, None), args.work_dir / "memo.sqlite")
    resources = Resources.of(generator, load_embedder(None, None))
    settings = EvalSettings(systems=["longqa"], generate=True, half=args.half, limit=args.limit,
                            datasets=args.datasets.split(","), structure=args.structure)
    runner = Runner(settings, resources, args.work_dir,
                    lambda name: make_system(name, resources, settings.budget, settings.max_steps))
    report = runner.run(args.questions, fresh=True)
    rows = [json.loads(line) for line in open(report["results_file"])]
    rows = [r for r in rows if r["metric"] == "f1" and r["f1"] is not None]
    questions = {json.loads(line)["id"]: json.loads(line)["question"] for line in open(args.questions)}
    answers = {r["id"]: {"dataset": r["dataset"], "answer": r["answer"], "f1": r["f1"], "em": r["em"],
                         "in_context": r["answer_recall"],
                         **chosen.get(" ".join(questions[r["id"]].split()), {})} for r in rows}
    golds = {json.loads(line)["id"]: json.loads(line)["answers"] for line in open(args.questions)}
    for qid, entry in answers.items():  # is a gold answer among the sentences the model read?
        entry["in_focus"] = answer_in_context(golds[qid], entry.get("focused", ""))
    args.out.write_text(json.dumps(answers, indent=1))

    by: dict[str, list[dict]] = defaultdict(list)
    for entry in answers.values():
        by[entry["dataset"]].append(entry)
        by["all"].append(entry)
    load = os.getloadavg()[0]
    print(f"half={args.half} questions={len(rows)} memo hits={generator.hits} misses={generator.misses} load={load:.2f}")
    print("  (answer in context / in focus: a gold answer among the context's / the focused sentences' words)")
    for name, entries in sorted(by.items()):
        def share(key):
            known = [e[key] for e in entries if e.get(key) is not None]
            return f"{sum(known) / len(known):.3f}" if known else "  –  "
        print(f"  {name:10} n={len(entries):3}  F1={sum(e['f1'] for e in entries) / len(entries):.3f}"
              f"  answer in context={share('in_context')}  in focus={share('in_focus')}")
    if args.compare and args.compare.exists():
        old = json.loads(args.compare.read_text())
        for qid, new in answers.items():
            before = old.get(qid)
            if before and abs(before["f1"] - new["f1"]) > 1e-6:
                print(f"  {new['f1'] - before['f1']:+.2f} {qid}: {questions[qid][:70]!r}\n"
                      f"        {before['answer'][:60]!r} -> {new['answer'][:60]!r}")


if __name__ == "__main__":
    main()
