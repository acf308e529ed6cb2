"""Could the reader reuse each passage's state instead of reading it? Prints a table; asserts nothing.

    python bench/passage_states.py --work-dir DIR --results RESULTS.jsonl [-m MODEL] [--limit N] [--out ROWS.jsonl]

Almost all of an answer's time on a CPU is the reader reading its prompt (about 1,000 tokens). Block
attention (TurboRAG, Block-Attention) computes each passage's key/value state once, on its own, and
places it in the context when a question needs it, so an ask reads only the question and the few
tokens around the passages. Without fine-tuning for it the model never saw passages that cannot see
each other, so the question is whether its replies hold. For each question of an evaluation run
(asked of its dataset's store in DIR/stores as `longqa eval`'s corpus protocol does) whose reader
prompt is a fact prompt, this builds that prompt and reads it two ways with the same tokens:

- whole: every token sees every token before it (what `ask` does);
- blocks: the fixed head is read once; each numbered passage is read in its own sequence that sees
  the head and itself only, right after the head (where a kept state would be read once), then
  moved to its position in the whole prompt (llama.cpp rotates its keys by the shift); then the
  passages' cells join one sequence and the question and the assistant's turn are read after
  them, seeing all.

and generates the reply greedily (24 tokens at most) both ways. Printed: how many replies are the
same, token F1 against the gold answers both ways, seconds to read the whole prompt against the
seconds to read only what follows the passages (what an ask would read with every passage's state
kept; loading kept states is timed from memory), and the state's bytes per token (the disk a kept
state needs).
"""

from __future__ import annotations

import argparse
import ctypes
import json
import os
import re
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
REPLY_TOKENS = 24


def split_prompt(prompt: str) -> tuple[str, list[str], str] | None:
    """The reader's fact prompt as (head up to "Passages:\\n", one text per numbered passage, the rest
    from the line before "Question:"); None for a prompt of another shape."""
    start = prompt.find("Passages:\n")
    end = prompt.rfind("\n\nQuestion:")
    if start < 0 or end < 0:
        return None
    head, body, tail = prompt[: start + len("Passages:\n")], prompt[start + len("Passages:\n"): end], prompt[end:]
    blocks = [b for b in re.split(r"(?m)^(?=\[\d+\] )", body) if b]
    return (head, blocks, tail) if blocks and all(re.match(r"\[\d+\] ", b) for b in blocks) else None


class Reader:
    """The generator's llama.cpp context, read by hand: a whole prompt, or passages as blocks."""

    def __init__(self, generator):
        import llama_cpp

        self.lib = llama_cpp
        self.llm = generator._llm
        self.stops = {self.llm.token_eos()} | set(self.llm.tokenize(b"<|im_end|>", add_bos=False, special=True))

    def tokens(self, text: str, first: bool = False) -> list[int]:
        return self.llm.tokenize(text.encode("utf-8"), add_bos=first, special=True)

    def clear(self) -> None:
        self.llm._ctx.kv_cache_seq_rm(-1, 0, -1)
        self.llm.n_tokens = 0

    def whole(self, parts: list[list[int]]) -> tuple[list[int], float]:
        self.clear()
        everything = [t for part in parts for t in part]
        tick = time.perf_counter()
        self.llm.eval(everything)
        seconds = time.perf_counter() - tick  # reading only, as the blocks' tail is timed
        return self.reply(), seconds

    def blocks(self, head: list[int], blocks: list[list[int]], tail: list[int]) -> tuple[list[int], float, float, int]:
        """The reply; seconds reading the tail; seconds loading the passages' states kept in
        memory into a spare sequence; their bytes."""
        llm, ctx = self.llm, self.llm._ctx
        self.clear()
        llm.eval(head)
        n_seq = int(llm.context_params.n_seq_max)
        position, state_bytes, load_seconds = len(head), 0, 0.0
        for block in blocks:
            # Read where a kept state would have been read, right after the head, then moved to
            # its place in this prompt (llama.cpp rotates the keys by the shift).
            seq = 1
            ctx.kv_cache_seq_cp(0, seq, 0, len(head))
            self._decode(block, len(head), seq)
            ctx.kv_cache_seq_rm(seq, 0, len(head))  # the block's own cells only, for its state
            if position != len(head):
                ctx.kv_cache_seq_shift(seq, len(head), len(head) + len(block), position - len(head))
            size = self.lib.llama_state_seq_get_size(llm.ctx, seq)
            data = (ctypes.c_uint8 * size)()
            self.lib.llama_state_seq_get_data(llm.ctx, data, size, seq)
            state_bytes += size
            ctx.kv_cache_seq_cp(seq, 0, position, position + len(block))
            ctx.kv_cache_seq_rm(seq, -1, -1)
            spare = n_seq - 1
            tick = time.perf_counter()
            self.lib.llama_state_seq_set_data(llm.ctx, data, size, spare)
            load_seconds += time.perf_counter() - tick
            ctx.kv_cache_seq_rm(spare, -1, -1)
            position += len(block)
        everything = head + [t for b in blocks for t in b]
        llm.input_ids[: len(everything)] = everything
        llm.n_tokens = len(everything)
        tick = time.perf_counter()
        llm.eval(tail)
        seconds = time.perf_counter() - tick
        return self.reply(), seconds, load_seconds, state_bytes

    def _decode(self, tokens: list[int], start: int, seq: int) -> None:
        llm = self.llm
        batch = llm._batch.batch
        for at in range(0, len(tokens), llm.n_batch):
            chunk = tokens[at: at + llm.n_batch]
            for k, token in enumerate(chunk):
                batch.token[k], batch.pos[k], batch.n_seq_id[k], batch.logits[k] = token, start + at + k, 1, False
                batch.seq_id[k][0] = seq
            batch.n_tokens = len(chunk)
            llm._ctx.decode(llm._batch)
            llm._batch.reset()

    def reply(self) -> list[int]:
        import numpy as np

        out = []
        for _ in range(REPLY_TOKENS):
            logits = np.ctypeslib.as_array(self.lib.llama_get_logits_ith(self.llm.ctx, -1),
                                           shape=(self.llm.n_vocab(),))
            token = int(logits.argmax())
            if token in self.stops:
                break
            out.append(token)
            self.llm.eval([token])
        return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--work-dir", type=Path, required=True, help="an eval work dir (its stores/)")
    parser.add_argument("--results", type=Path, required=True, help="an eval run's per-question .jsonl")
    parser.add_argument("-m", "--model", default="qwen2.5-coder-1.5b")
    parser.add_argument("--limit", type=int, default=None)
    parser.add_argument("--out", type=Path, default=None, help="per-question rows as JSON lines")
    args = parser.parse_args()

    from longqa.ask.settings import DEFAULTS
    from longqa.eval.metrics import token_f1
    from longqa.models.resolve import load_embedder, load_generator
    from reader_plans import reader_plans

    generator = load_generator(args.model, None)
    embedder = load_embedder(None, None)
    reader = Reader(generator)
    rows = []
    started_load = os.getloadavg()
    for q, _, plan, _ in reader_plans(args.work_dir, args.results, generator, embedder, DEFAULTS):
        qid = q["id"]
        if not q.get("answers") or q.get("metric") == "judge":
            continue
        parts = split_prompt(plan.prompt or "") if plan.mode == "short" else None
        if parts is None:
            continue
        head_text, block_texts, tail_text = parts
        head = reader.tokens(head_text, first=True)
        blocks = [reader.tokens(b) for b in block_texts]
        tail = reader.tokens(tail_text)
        whole, whole_seconds = reader.whole([head, *blocks, tail])
        split, tail_seconds, load_seconds, state_bytes = reader.blocks(head, blocks, tail)

        def text(tokens: list[int]) -> str:
            return re.sub(r"\s*\[\d+\]\s*$", "", reader.llm.detokenize(tokens).decode("utf-8", "replace")).strip()

        answers = [str(a) for a in q["answers"]]
        row = {"id": qid, "dataset": q["dataset"], "whole": text(whole), "blocks": text(split),
               "f1_whole": token_f1(text(whole), answers), "f1_blocks": token_f1(text(split), answers),
               "prompt_tokens": len(head) + sum(map(len, blocks)) + len(tail), "passages": len(blocks),
               "tail_tokens": len(tail), "passage_tokens": sum(map(len, blocks)),
               "whole_seconds": round(whole_seconds, 2), "tail_seconds": round(tail_seconds, 2),
               "load_seconds": round(load_seconds, 3), "state_bytes": state_bytes}
        rows.append(row)
        print(json.dumps(row, ensure_ascii=False), flush=True)
        if args.limit and len(rows) >= args.limit:
            break
    if args.out:
        args.out.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    n = max(1, len(rows))
    same = sum(r["whole"] == r["blocks"] for r in rows)
    median = lambda xs: sorted(xs)[len(xs) // 2] if xs else float("nan")  # noqa: E731
    print(f"\n{len(rows)} fact prompts ({args.model})")
    print(f"same reply both ways: {same} ({same / n:.2f})")
    print(f"token F1, whole: {sum(r['f1_whole'] for r in rows) / n:.3f}; blocks: {sum(r['f1_blocks'] for r in rows) / n:.3f}")
    print(f"prompt tokens, median: {median([r['prompt_tokens'] for r in rows])}; read after the passages: "
          f"{median([r['tail_tokens'] for r in rows])}")
    print(f"seconds reading, median: whole prompt {median([r['whole_seconds'] for r in rows]):.2f}; "
          f"after kept passage states {median([r['tail_seconds'] for r in rows]):.2f} "
          f"(+ loading the states from memory {median([r['load_seconds'] for r in rows]):.3f})")
    per_token = sum(r["state_bytes"] for r in rows) / max(1, sum(r["passage_tokens"] for r in rows))
    print(f"kept state: {per_token / 1024:.1f} KiB per passage token")
    print(f"load average: {' '.join(f'{x:.2f}' for x in started_load)} at the start, "
          f"{' '.join(f'{x:.2f}' for x in os.getloadavg())} at the end")


if __name__ == "__main__":
    main()
