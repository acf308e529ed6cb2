"""Seconds the harness's answer step takes at several context sizes, with the default generator.

    python bench/eval_answer_speed.py [--sizes 500,2000,4000,6000] [--doc PATH]

Each size is measured on a fresh slice of a real document (so no prompt prefix is reused from the
KV cache), through the same prompt and grammar `longqa eval` uses. Prints prompt tokens and
seconds per size, and the machine's load average, because on a shared CPU llama.cpp slows down far
more than the load suggests. Use it to choose --full-context-cap and to plan a run.
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

from longqa import tokens
from longqa.eval.answer import answer
from longqa.eval.retrieved import Passage
from longqa.models.resolve import load_generator
from longqa.parse import parse_file
from longqa.structure.build import body_text

DEFAULT_DOC = Path(__file__).resolve().parents[2] / "shared/evaldata/docs/leval/financial_qa_04.txt"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="500,2000,4000,6000")
    parser.add_argument("--doc", type=Path, default=DEFAULT_DOC)
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]

    started = time.perf_counter()
    generator = load_generator()
    print(f"generator {generator.name} (n_ctx {generator.n_ctx}) loaded in {time.perf_counter() - started:.1f} s; "
          f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}")
    body, _ = body_text(parse_file(args.doc))
    ids = tokens.encoding().encode_ordinary(body)
    offset = 0
    for size in sizes:
        if offset + size > len(ids):
            offset = 0
        text = tokens.encoding().decode(ids[offset : offset + size])
        offset += size
        passages = [Passage(text=text, doc=str(args.doc), title=args.doc.stem)]
        tick = time.perf_counter()
        result = answer(generator, "What does the company plan for the next year?", passages, False)
        seconds = time.perf_counter() - tick
        print(f"context {size:>5} tokens  prompt {result.prompt_tokens:>5} generator tokens  {seconds:6.1f} s  "
              f"answer {result.text[:50]!r}")
    print(f"load average now {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
