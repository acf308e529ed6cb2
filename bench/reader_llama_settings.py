"""llama.cpp's settings for the reader, measured: how long the default reader takes to read a prompt
of the length `ask` gives it, per batch size, flash attention and KV cache type. Prints a table;
asserts nothing.

    python bench/reader_llama_settings.py [--profile qwen2.5-coder-1.5b] [--tokens 1008] [--runs 2]

Each setting opens the profile's GGUF in a fresh process as longqa opens it (longqa/models/llama.py:
the free cores' threads, flash attention on, n_batch = n_ubatch = 512), but for the one setting
changed, and reads the same `--tokens` tokens of the sample handbook into an empty context
`--runs` times (median). On a CPU the reading of the prompt is nearly all of an answer's time
(bench/RESULTS.md), so a setting that reads faster with the same outputs is worth shipping; the
first reply token's top choice is printed beside each to show the outputs stay the same.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(Path(__file__).resolve().parent))  # bench/fresh_ask.py

# name -> keyword arguments of llama_cpp.Llama changed from longqa's own
SETTINGS = {
    "as shipped (batch 512, flash on, f16 cache)": {},
    "batch 1024": {"n_batch": 1024, "n_ubatch": 1024},
    "batch 256": {"n_batch": 256, "n_ubatch": 256},
    "flash attention off": {"flash_attn": False},
    "KV cache q8_0": {"type_k": 8, "type_v": 8},
}


def child(profile: str, name: str, count: int, runs: int) -> dict:
    """(Run in a fresh process.) Open the model with one setting changed and time the reading."""
    import llama_cpp

    from fresh_ask import reading_seconds

    from longqa.models import profiles
    from longqa.models.resolve import profile_path
    from longqa.models.threads import cpu_threads

    path = profile_path(profiles.named(profile))
    options = {"n_ctx": 2048, "n_batch": 512, "n_ubatch": 512, "flash_attn": True, **SETTINGS[name]}
    threads = cpu_threads()
    started = time.perf_counter()
    llm = llama_cpp.Llama(model_path=str(path), n_gpu_layers=0, n_threads=threads, n_threads_batch=threads,
                          seed=0, verbose=False, **options)
    load = time.perf_counter() - started
    read = reading_seconds(llm, count, runs)
    import numpy as np

    logits = np.ctypeslib.as_array(llama_cpp.llama_get_logits_ith(llm._ctx.ctx, -1), shape=(llm.n_vocab(),))
    top = int(logits.argmax())
    return {"setting": name, "threads": threads, "load_s": round(load, 2), "tokens": count,
            "read_s": round(read, 2), "next_token": llm.detokenize([top]).decode(errors="replace")}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--profile", default="qwen2.5-coder-1.5b")
    parser.add_argument("--tokens", type=int, default=1008, help="the default reader's prompt for the quick-start question")
    parser.add_argument("--runs", type=int, default=2)
    parser.add_argument("--child", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(child(args.profile, args.child, args.tokens, args.runs)))
        return 0
    print(f"{args.profile}, {args.tokens} tokens read into an empty context, median of {args.runs}; "
          f"load {' '.join(f'{x:.2f}' for x in os.getloadavg())} at the start")
    for name in SETTINGS:
        done = subprocess.run([sys.executable, __file__, "--profile", args.profile, "--tokens", str(args.tokens),
                               "--runs", str(args.runs), "--child", name], capture_output=True, text=True)
        if done.returncode != 0:
            print(f"  {name}: failed ({done.stderr.strip().splitlines()[-1] if done.stderr.strip() else done.returncode})")
            continue
        row = json.loads(done.stdout.strip().splitlines()[-1])
        print(f"  {name:45s} {row['read_s']:6.2f} s ({row['tokens'] / row['read_s']:.0f} tokens/s, "
              f"{row['threads']} threads, load {row['load_s']} s, next token {row['next_token']!r}; "
              f"load {' '.join(f'{x:.2f}' for x in os.getloadavg())})", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
