"""Try the reader's prompt without re-running the search: capture once, replay each variant.

    capture  runs `longqa eval` over a half (as the committed reports do) and writes, per question
             the reader answers, what the reader read: the question, the numbered passages, the
             focused and context sentences, the entities a multi-hop search went through, and the
             span ranker's own pick (what an unproven reply falls back to).
    replay   reads a capture and, for each prompt variant, asks the reader again, proves its reply
             as the answer stage does, and prints token F1 and EM against the gold answers, with
             the load average beside the seconds.

    python bench/reader_prompts.py capture ../shared/evaldata/dev.jsonl --half tune --limit 150 \\
        -m qwen2.5-coder-1.5b --work-dir W --out W/reader-inputs.jsonl
    python bench/reader_prompts.py replay W/reader-inputs.jsonl ../shared/evaldata/dev.jsonl \\
        -m qwen2.5-coder-1.5b --variants shipped,question-first

The variants live here while they are tried; the one that wins on the tune half (and holds on the
report half) moves into longqa/ask/prompts.py.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import time
from dataclasses import dataclass
from types import SimpleNamespace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from longqa.ask import prompts  # noqa: E402
from longqa.ask.answer import choose, reader, reader_confidence  # noqa: E402
from longqa.ask.answer.grounded import NO_ANSWER  # noqa: E402
from longqa.eval.metrics import exact_match, token_f1  # noqa: E402
from longqa.models.chat import Message  # noqa: E402


def capture(args) -> None:
    """Run the eval with the reader's inputs recorded (the answers and the report are the eval's)."""
    out = open(args.out, "w")
    seen: dict = {}
    real_message, real_choose = prompts.reader_message, choose.choose_short

    def message(question, passages, options=None):
        seen.update(question=question, passages=passages, options=options or {})
        return real_message(question, passages, options)

    def choose_short(generator, asked, focused, prompt, context=None, bridges=(), embedder=None, ranker=None,
                     on_draft=None):
        # Every short answer a reader could give, whichever path the stage takes today (a lettered
        # question's options aside): the ranker's own pick is what an unproven reply falls back to.
        text, grounding = real_choose(generator, asked, focused, prompt, context, bridges, embedder, ranker,
                                      on_draft=on_draft)
        if not asked.letters and focused:
            pick, _ = choose.ranked_answer(generator, asked, focused, prompt, context or focused, bridges,
                                           embedder, ranker, draft="", model=True)
            record = {"question": asked.question, "want": asked.want, "passages": seen.get("passages", ""),
                      "bridges": list(bridges), "answer": text, "mode": grounding.mode, "ranker_pick": pick,
                      "focused": [{"text": s.text, "n": s.passage.n, "score": s.score, "order": s.order}
                                  for s in focused],
                      "context": [{"text": s.text, "n": s.passage.n} for s in context or focused]}
            out.write(json.dumps(record) + "\n")
            out.flush()
        return text, grounding

    prompts.reader_message, choose.choose_short = message, choose_short
    from longqa.cli import app, register

    command = ["eval", args.questions, "--half", args.half, "--limit", str(args.limit), "--systems", "longqa",
               "-m", args.model, "--work-dir", args.work_dir, "--results", args.out + ".results.jsonl",
               "--fresh", "--json"]
    register(command)
    try:
        app(command, standalone_mode=False)
    finally:
        out.close()


# --- variants ---------------------------------------------------------------------------------

@dataclass
class Variant:
    system: str
    question_first: bool = False  # the question before the passages as well as after them
    read_sentences: bool = False  # the reader answers "what/how ..." questions the stage answers with a sentence
    best_last: bool = False  # the passage holding the best sentence comes last, next to the question


EXAMPLES_SYSTEM = (
    "You answer questions about the user's documents using only the numbered passages given with "
    "each question.\n"
    "- Reply with the shortest exact answer to what the question asks, copied word for word from "
    "one passage, then that passage's number in brackets.\n"
    "- When the question names something by a description (\"the company that makes X\", \"the "
    "author of Y\"), first find what that is, then the fact the question asks about it, often in "
    "another passage. Reply with that fact, not with the thing described.\n"
    "- For a yes/no question, reply Yes or No, then the number of the passage that decides it.\n"
    "- For a question with lettered options, reply with the letter of the right option, like: (B)\n"
    "- If the passages do not contain the answer, reply: unknown\n"
    "Reply with nothing else.\n"
    "\n"
    "Examples, for these passages:\n"
    "[1] Installation > Electrical supply\n"
    "The pump needs a 230 V supply protected by a 16 A breaker.\n"
    "[2] Company\n"
    "The pump is made by Harlow Instruments, founded in 1962 by Ada Marsh.\n"
    "[3] Maintenance\n"
    "Replace the filter cartridge every 6 months, or sooner if the flow drops.\n"
    "[4] People > Ada Marsh\n"
    "Ada Marsh studied physics at the University of Leeds.\n"
    "\n"
    "Question: How often should the filter cartridge be replaced?\n"
    "every 6 months [3]\n"
    "Question: Where did the founder of the pump's maker study?\n"
    "University of Leeds [4]\n"
    "Question: Can the pump run on a 110 V supply?\n"
    "No [1]\n"
    "Question: How much does the pump weigh?\n"
    "unknown"
)


VARIANTS = {
    "shipped": Variant(prompts.READER_SYSTEM),
    "question-first": Variant(prompts.READER_SYSTEM, question_first=True),
    "examples": Variant(EXAMPLES_SYSTEM),
    "best-last": Variant(prompts.READER_SYSTEM, best_last=True),
    "read-sentences": Variant(prompts.READER_SYSTEM, read_sentences=True),
}


def best_last(record: dict) -> str:
    """The captured passages, each passage's block moved so that they run from the weakest best
    sentence to the strongest (the strongest next to the question)."""
    blocks: list[list[str]] = []
    for line in record["passages"].split("\n"):
        if re.match(r"\[\d{1,3}\] ", line) or not blocks:
            blocks.append([])
        blocks[-1].append(line)
    best: dict[int, float] = {}
    for row in record["focused"]:
        best[row["n"]] = max(best.get(row["n"], -1e9), row["score"])

    def strength(block):
        found = re.match(r"\[(\d{1,3})\] ", block[0])
        return best.get(int(found.group(1)), -1e9) if found else -1e9

    return "\n".join(line for block in sorted(blocks, key=strength) for line in block)


def user_message(variant: Variant, record: dict) -> str:
    passages = best_last(record) if variant.best_last else record["passages"]
    body = prompts.reader_message(record["question"], passages, record.get("options"))
    if variant.question_first:
        body = f"Question: {prompts.one_line(record['question'])}\n\n{body}"
    return body


class _Passage:
    def __init__(self, n):
        self.n = n


class _Sentence:
    def __init__(self, row):
        self.text, self.passage = row["text"], _Passage(row["n"])


def replayed_answer(generator, variant: Variant, record: dict) -> dict:
    """The answer the stage would show for this variant's reply (reader.settle decides, as in the
    stage; the span ranker's recorded pick stands in for its choice), how it was reached, and for
    a proven reply the confidence signals the stage would read."""
    if record["mode"] == "computed" or (record["want"] == "sentence" and not variant.read_sentences):
        return {"answer": record["answer"], "mode": record["mode"]}
    prompt = generator.chat_prompt([Message("system", variant.system), Message("user", user_message(variant, record))])
    if prompt not in _REPLIED:  # another variant may have sent the very same prompt: the same reply
        _REPLIED[prompt] = _proven(generator, prompt, record)
    return _REPLIED[prompt]


_REPLIED: dict[str, dict] = {}


def _proven(generator, prompt: str, record: dict) -> dict:
    reply = reader.read(generator, prompt, SimpleNamespace(want=record["want"]))
    focused = [_Sentence(row) for row in record["focused"]]
    context = [_Sentence(row) for row in record["context"]]
    settled = reader.settle(reply, focused, context)
    out = {"raw": reply.raw, "probability": reply.probability, "mode": settled.how}
    if settled.how == "verdict":
        return {**out, "answer": reply.verdict}
    if settled.how == "unknown":
        return {**out, "answer": NO_ANSWER}
    if settled.how != "read":
        return {**out, "answer": record["ranker_pick"]}
    return {**out, "answer": settled.shown, "named": settled.sentence.passage.n == reply.cited,
            "in_focus": any(s is settled.sentence for s in focused),
            "ranker_agrees": reader_confidence.same_answer(settled.shown, _bare(record["ranker_pick"]))}


def _bare(answer: str) -> str:
    return reader._CITED.sub("", answer).strip()


def _whole(record: dict) -> bool:
    """The capture holds this question's own passages (every focused sentence is in them)."""
    said = " ".join(record["passages"].split())
    return all(" ".join(row["text"].split()) in said for row in record["focused"])


def replay(args) -> None:
    from longqa.models.resolve import load_generator

    golds = {}
    for line in open(args.questions):
        row = json.loads(line)
        golds[row["question"]] = row.get("answers") or []
    records = [json.loads(line) for line in open(args.capture)]
    records = [r for r in records if golds.get(r["question"]) and _whole(r)][: args.limit]
    generator = load_generator(args.model)
    print(f"{len(records)} questions, model {args.model}, load {os.getloadavg()[0]:.2f}")
    for name in args.variants.split(","):
        variant = VARIANTS[name]
        f1 = em = 0.0
        modes: dict[str, int] = {}
        started = time.perf_counter()
        rows = []
        for record in records:
            row = replayed_answer(generator, variant, record)
            gold = golds[record["question"]]
            row.update(question=record["question"], want=record["want"],
                       f1=token_f1(_bare(row["answer"]), gold), em=exact_match(_bare(row["answer"]), gold))
            f1 += row["f1"]
            em += row["em"]
            modes[row["mode"]] = modes.get(row["mode"], 0) + 1
            rows.append(row)
        seconds = (time.perf_counter() - started) / max(1, len(records))
        print(f"{name:24s} F1 {f1 / len(records):.3f}  EM {em / len(records):.3f}  "
              f"{seconds:.1f} s/q  modes {modes}  load {os.getloadavg()[0]:.2f}", flush=True)
        if args.rows:
            with open(f"{args.rows}.{name}.jsonl", "w") as handle:
                handle.writelines(json.dumps(row) + "\n" for row in rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = parser.add_subparsers(dest="command", required=True)
    one = commands.add_parser("capture")
    one.add_argument("questions")
    one.add_argument("--half", default="tune")
    one.add_argument("--limit", type=int, default=150)
    one.add_argument("-m", "--model", default="qwen2.5-coder-1.5b")
    one.add_argument("--work-dir", required=True)
    one.add_argument("--out", required=True)
    two = commands.add_parser("replay")
    two.add_argument("capture")
    two.add_argument("questions")
    two.add_argument("-m", "--model", default="qwen2.5-coder-1.5b")
    two.add_argument("--variants", default="shipped")
    two.add_argument("--limit", type=int, default=10_000)
    two.add_argument("--rows", help="write each variant's answers to ROWS.VARIANT.jsonl")
    args = parser.parse_args()
    capture(args) if args.command == "capture" else replay(args)


if __name__ == "__main__":
    main()
