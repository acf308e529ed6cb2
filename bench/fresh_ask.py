"""Where a fresh `longqa ask` spends its time, whole process, as a shell user waits for it.

    python bench/fresh_ask.py [--runs 5] [--llm-url URL] [--db STORE] [--profiles A,B] [--out FILE]
                              [--set KEY=VALUE ...]

Ingests the sample handbook into a temporary store (or uses --db), then runs, each --runs times
in a fresh process: `longqa --help`, `longqa ask --context-only`, `longqa ask` (and with
--llm-url, the same through that server). For each it prints the median wall time, the median
CPU time and the largest peak RSS of the process, and for `ask` the median of the stages its
`--json` timings report (startup, context, generator load and wait, first token, total; the
last three counted from the process's start). Then the parts of one fresh process one at a time
(interpreter, imports, store, tokenizer ranks, embedder, llama.cpp, the generator with its
context, the context-only question, the answer), each with its wall and CPU time and the memory
after it, and one `python -X importtime` run of `ask --context-only` lists
the slowest imports. With --profiles (default: every installed profile, models/profiles.py) it
times `ask -m NAME` for each: a reader's first words (first_draft: written, before they are
proven), the first answer token and the whole answer, the prompt tokens the model read and the
seconds they took, and beside them llama.cpp alone reading as many tokens into an empty context
(the floor on this machine); --out writes those rows as JSON (bench/profile_figures.py reads
them). The load average is printed beside every figure: the machine may be shared, and a loaded
machine's figures are not an idle one's.

The processes run with bytecode caching on (PYTHONDONTWRITEBYTECODE removed, a first run writes
the caches), as an installed longqa runs; with it off every run compiles the package again.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SAMPLE = REPO / "examples" / "kestrel_valley_handbook.pdf"
QUESTION = "How long can the standby generators run the works before the diesel runs out?"


def load() -> str:
    return "load " + " ".join(f"{x:.2f}" for x in os.getloadavg())


def timed(argv: list[str], env: dict) -> tuple[float, float, float, str]:
    """(wall s, CPU s, peak RSS MiB, stdout) of one fresh process (its own rusage, by wait4)."""
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        started = time.perf_counter()
        process = subprocess.Popen(argv, stdout=out, stderr=err, env=env, text=True)
        _, status, usage = os.wait4(process.pid, 0)
        wall = time.perf_counter() - started
        process.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0), err.seek(0)
        stdout, stderr = out.read(), err.read()
    if process.returncode not in (0, 4):
        raise SystemExit(f"{' '.join(argv)} failed ({process.returncode}): {stderr[-400:]}")
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, stdout


def measure(label: str, argv: list[str], env: dict, runs: int) -> dict:
    walls, cpus, peak, stages = [], [], 0.0, {}
    for _ in range(runs):
        wall, cpu, rss, out = timed(argv, env)
        walls.append(wall)
        cpus.append(cpu)
        peak = max(peak, rss)
        if "--json" in argv and out.strip():
            for key, value in (json.loads(out).get("timings") or {}).items():
                stages.setdefault(key, []).append(value)
    print(f"{label:32s} wall {statistics.median(walls):5.2f} s  cpu {statistics.median(cpus):5.2f} s  "
          f"peak {peak:5.0f} MiB  ({runs} runs; {load()})")
    for key in ("startup", "retrieval", "context", "generator_load", "generator_wait", "focus", "prompt_reading",
                "first_draft", "first_token", "total"):
        if key in stages:
            print(f"    {key:20s} {statistics.median(stages[key]):6.3f} s")
    if "prompt_tokens_read" in stages:  # what the model read in all (answer, checks, decisions)
        read, seconds = statistics.median(stages["prompt_tokens_read"]), statistics.median(stages["prompt_reading"])
        print(f"    {'prompt tokens read':20s} {read:6.0f}    ({read / max(seconds, 1e-9):.0f} tokens/s)")
    return {"wall_p50": round(statistics.median(walls), 2), "cpu_p50": round(statistics.median(cpus), 2),
            "peak_mib": round(peak), "runs": runs, "load": [round(x, 2) for x in os.getloadavg()],
            **{f"{key}_p50": round(statistics.median(values), 2) for key, values in stages.items()
               if key in ("first_draft", "first_token", "total", "prompt_tokens_read", "prompt_reading")}}


def reading_seconds(llm, count: int, runs: int) -> float:
    """Median seconds for `llm` (a llama_cpp.Llama) to read `count` tokens of the sample handbook
    into an empty context."""
    import pymupdf

    text = " ".join(page.get_text() for page in pymupdf.open(SAMPLE))
    tokens = llm.tokenize(text.encode("utf-8"), add_bos=True)[:count]
    if len(tokens) < count:
        tokens = (tokens * (count // max(len(tokens), 1) + 1))[:count]
    seconds = []
    for _ in range(runs):
        llm.reset()
        llm._ctx.kv_cache_clear()
        started = time.perf_counter()
        llm.eval(tokens)
        seconds.append(time.perf_counter() - started)
    return statistics.median(seconds)


def floor(profile: str, count: int, runs: int) -> dict:
    """(Run in a fresh process.) llama.cpp's own speed on this machine: `count` tokens of the
    sample handbook read into an empty context of the profile's model, opened as longqa opens it,
    nothing else around it: the least a prompt of that length can cost here."""
    from longqa.models.resolve import load_generator

    best = reading_seconds(load_generator(profile).llama, count, runs)
    print(f"    {'llama.cpp alone':20s} {best:6.3f} s for {count} tokens ({count / best:.0f} tokens/s; {load()})")
    return {"floor_tokens": count, "floor_seconds_p50": round(best, 3)}


def slowest_imports(argv: list[str], env: dict, top: int = 12) -> None:
    result = subprocess.run([sys.executable, "-X", "importtime", *argv[1:]], capture_output=True, text=True, env=env)
    rows = []
    for line in result.stderr.splitlines():
        match = re.match(r"import time:\s+(\d+) \|\s+(\d+) \|(\s*)(\S+)", line)
        if match:
            rows.append((int(match.group(2)), len(match.group(3)), match.group(4)))
    top_level = sorted((r for r in rows if r[1] <= 1), reverse=True)[:top]
    total = sum(r[0] for r in rows if r[1] <= 1)
    print(f"imports of `ask --context-only`: {total / 1e6:.2f} s in all (cumulative, top-level; {load()})")
    for micro, _, name in top_level:
        print(f"    {micro / 1e6:6.3f} s  {name}")


def parts(db: str) -> None:
    """(Run in a fresh process.) Each part of a fresh `ask`, in the order `ask` meets them."""
    wall, cpu = time.perf_counter(), time.process_time()
    from longqa.cli.clock import since_start  # imports longqa.cli: typer, rich, the store

    print(f"  {'part':34s} {'wall s':>7s} {'cpu s':>6s} {'rss MiB':>8s}  ({load()})")

    def rss() -> float:
        with open("/proc/self/status") as status:
            return next(int(line.split()[1]) for line in status if line.startswith("VmRSS")) / 1024

    def part(label: str, run):
        wall, cpu = time.perf_counter(), time.process_time()
        value = run()
        print(f"  {label:34s} {time.perf_counter() - wall:7.3f} {time.process_time() - cpu:6.3f} {rss():8.0f}")
        return value

    imported = time.perf_counter() - wall
    print(f"  {'interpreter start':34s} {since_start() - imported:7.3f} {cpu:6.3f}")
    print(f"  {'import longqa.cli':34s} {imported:7.3f} {time.process_time() - cpu:6.3f} {rss():8.0f}")
    part("import `ask`", lambda: __import__("longqa.cli.ask"))
    part("import the pipeline", lambda: __import__("longqa.ask.pipeline"))
    from longqa import tokens
    from longqa.ask.pipeline import Pipeline
    from longqa.models import resolve
    from longqa.store import open_db

    store = part("open the store", lambda: open_db(db, readonly=True))
    part("tokenizer ranks (cl100k)", tokens.encoding)
    embedder = part("embedder (int8 ONNX + vocabulary)", lambda: resolve.load_embedder())
    part("import the llama.cpp backend", lambda: __import__("longqa.models.llama"))
    generator = part("generator (model and context)", lambda: resolve.load_generator())
    allocated = getattr(generator, "allocated", generator.n_ctx)
    print(f"  {f'(window {generator.n_ctx} tokens, {allocated} allocated)':34s}")
    lazy = resolve.lazy_generator()
    part("context-only question", lambda: Pipeline(store, lazy, embedder).retrieve_context(QUESTION))
    print(f"  {'(generator loaded by it: ' + str(lazy.is_loaded) + ')':34s}")
    part("answer (generator loaded)", lambda: Pipeline(store, generator, embedder).answer(QUESTION))
    allocated = getattr(generator, "allocated", generator.n_ctx)
    print(f"  {f'(allocated after it: {allocated} tokens)':34s}")


def cpu_model() -> str:
    """The CPU's name and its widest vector instructions: the model's prompt reading speed follows
    them (on 2 cores of an AVX2 host it read 250-340 tokens/s, where earlier figures in
    bench/RESULTS.md say ~700), so figures are compared only between runs on the same host."""
    try:
        info = Path("/proc/cpuinfo").read_text(errors="replace")
    except OSError:
        return "unknown CPU"
    name = re.search(r"^model name\s*:\s*(.+)$", info, re.M)
    flags_line = re.search(r"^flags\s*:\s*(.+)$", info, re.M)
    flags = set(flags_line.group(1).split()) if flags_line else set()
    vector = next((f for f in ("avx512f", "avx2", "avx", "neon") if f in flags), "no AVX")
    return f"{name.group(1).strip() if name else 'unknown CPU'}, {vector}"


def chosen_profiles(value: str | None) -> list[str]:
    """The profiles to time: those named, else every installed one."""
    sys.path.insert(0, str(REPO))
    from longqa.models import profiles
    from longqa.models.packaged import installed

    if value is not None:
        return [name for name in value.split(",") if name]
    return [name for name, profile in profiles.PROFILES.items() if installed(profile)]


def commit() -> str:
    done = subprocess.run(["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
    return done.stdout.strip() or "unknown"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--llm-url", default=None, help="also time `ask` through this server")
    parser.add_argument("--db", type=Path, default=None, help="a store holding the sample handbook")
    parser.add_argument("--profiles", default=None, help="comma-separated profiles to time (default: the installed)")
    parser.add_argument("--out", type=Path, default=None, help="write the profiles' rows as JSON here")
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                        help="an ask setting for every timed ask, as `longqa ask --set`")
    parser.add_argument("--skip-parts", action="store_true", help="no parts and no import times")
    parser.add_argument("--parts", default=None, help=argparse.SUPPRESS)  # the child that times the parts
    parser.add_argument("--floor", nargs=3, default=None, help=argparse.SUPPRESS)  # the child that times llama.cpp alone
    args = parser.parse_args()
    if args.parts:
        parts(args.parts)
        return 0
    if args.floor:
        print(json.dumps(floor(args.floor[0], int(args.floor[1]), int(args.floor[2]))))
        return 0
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    env.pop("LONGQA_LLM_URL", None)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    longqa = [sys.executable, "-m", "longqa"]
    with tempfile.TemporaryDirectory() as tmp:
        db = args.db or Path(tmp) / "sample.db"
        if args.db is None:
            subprocess.run(longqa + ["ingest", str(SAMPLE), "-q", "-d", str(db)], check=True, env=env)
        ask = longqa + ["ask", QUESTION, "-d", str(db)] + [part for item in args.set for part in ("--set", item)]
        timed(ask + ["--context-only"], env)  # models prepared, caches warm: what a second ask sees
        print(f"python {sys.version.split()[0]}, {os.cpu_count()} CPUs ({cpu_model()}); {load()}")
        measure("longqa --help", longqa + ["--help"], env, args.runs)
        measure("ask --context-only", ask + ["--context-only", "--json"], env, args.runs)
        measure("ask", ask + ["--json"], env, args.runs)
        measure("ask (streamed to a pipe)", ask, env, args.runs)
        if args.llm_url:
            measure("ask --llm-url", ask + ["--json", "--llm-url", args.llm_url], env, args.runs)
        rows = {}
        for name in chosen_profiles(args.profiles):
            timed(ask + ["--json", "-m", name], env)  # assembled and its kept head written: not timed
            rows[name] = measure(f"ask -m {name}", ask + ["--json", "-m", name], env, args.runs)
            if rows[name].get("prompt_tokens_read_p50"):  # the same number of tokens, read by llama.cpp alone
                done = subprocess.run([sys.executable, __file__, "--floor", name,
                                       str(int(rows[name]["prompt_tokens_read_p50"])), str(args.runs)],
                                      env=env, capture_output=True, text=True)
                lines = done.stdout.strip().splitlines() or [done.stderr.strip()[-300:]]
                print("\n".join(lines[:-1]) if done.returncode == 0 else lines[-1])
                if done.returncode == 0:
                    rows[name].update(json.loads(lines[-1]))
        if args.out:
            args.out.write_text(json.dumps({
                "command": "python bench/fresh_ask.py " + " ".join(sys.argv[1:]), "commit": commit(),
                "date": time.strftime("%Y-%m-%d"), "machine": f"{os.cpu_count()} CPUs ({cpu_model()})",
                "question": QUESTION, "profiles": rows}, indent=1) + "\n")
        if args.skip_parts:
            return 0
        print("parts of one fresh process:")
        sys.stdout.flush()
        subprocess.run([sys.executable, __file__, "--parts", str(db)], check=True, env=env)
        slowest_imports(ask + ["--context-only"], env)
    return 0


if __name__ == "__main__":
    sys.exit(main())
