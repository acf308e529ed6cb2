"""How good is each model-made decision of `ask`, for the model in use? Prints a table; asserts nothing.

    python bench/decisions.py --work-dir /work/evalrun-search [--half tune] [--limit 60] [-m MODEL.gguf]
                              [--decisions scope,type,outline,sufficiency,router,next] [--out FILE]

With `--out` (longqa/models/data/decisions.json is the shipped table), the figures are written
under the model's name with the command, commit, date, half, question count and load average;
longqa.models.skill reads that file, so no figure there is typed by hand.

Questions come from ../shared/evaldata/dev.jsonl (the TUNE half by default: weights are set on
it, figures reported on the other half); each is asked of its own documents in an eval store
that holds them (`longqa eval --work-dir DIR` builds those; questions without one are skipped).
Labels, and how far they can be trusted:
- scope (R_q, AUC): "global" for free-form questions the sources grade by a judge (long
  answers), "local" for short-answer ones — a proxy, not an annotation;
- type (class-balanced accuracy, chance 1/classes present), over the five labels and as `ask`
  uses it (extractive vs abstractive, where no rule fired; questions of those two gold types): from the
  source task — HotpotQA bridge, MuSiQue and the multi-hop L-CiteEval sets multi-bridge;
  HotpotQA comparison multi-source; TAT-QA, FinQA and FinanceBench metrics arithmetic; judged
  free-form abstractive; the rest extractive;
- outline choice (top-1 accuracy, chance 1/sections shown): the shown section holding a gold
  answer string, where exactly one does;
- sufficiency (AUC of p(yes)): whether the shown passages (the best 3 first-stage leaves, or
  the 4th-6th) contain a gold answer string;
- sufficiency, read from the answer (a reader only; AUC of 1 - p("unknown")): the same shown
  passages, numbered as the answer prompt numbers them, asked the question in the reader's answer
  prompt; the probability that its reply opens with "unknown" is its judgement that they do not
  state the answer, read from the pass the answer needs anyway (nothing asked twice);
- next query (a reader only; multi-bridge questions whose best 3 first-stage leaves hold no gold
  answer string): the share whose query, retrieved as the search retrieves a hop, brings a leaf
  holding one among its best 5; chance is the same share for the question's own next 5 leaves
  (what reading on without a new query would bring), and the rule's query (bridge.py: a name in
  the passages plus the question words they lack) is printed beside it;
- the router's moves (ask/router.py, on the subtree of the best first-stage leaves as the search
  would show it), where some but not all of those leaves hold gold (a gold answer string, or for
  yes/no and free-form questions a leaf inside a gold evidence passage or holding one):
  router-expand (accuracy, chance = the share of gold leaves shown): with nothing read yet and
  only EXPAND allowed, the node it reads holds gold;
  router-answer (class-balanced accuracy, chance 0.5): with one leaf read, ANSWER when that leaf
  holds gold, any other move when it does not (the other shown leaves hold none).
The last column is the weight longqa.models.skill derives: max(0, (skill - chance) / (1 - chance)).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
EVALDATA = Path(os.environ.get("LONGQA_EVALDATA", REPO.parent / "shared" / "evaldata"))


DECISIONS = ("scope", "type", "outline", "sufficiency", "router", "next")


def gold_type(q: dict) -> str:
    task, dataset = q["task"], q["dataset"]
    if dataset == "musique" or task in ("bridge", "2wikimultihopqa", "hotpotqa"):
        return "multi-bridge"
    if task == "comparison":
        return "multi-source"
    if task in ("tat_qa", "fin_qa", "metrics-generated"):
        return "arithmetic"
    if q["metric"] == "judge":
        return "abstractive"
    return "extractive"


def auc(pairs: list[tuple[float, bool]]) -> float | None:
    pos = [s for s, y in pairs if y]
    neg = [s for s, y in pairs if not y]
    if not pos or not neg:
        return None
    wins = sum((p > n) + 0.5 * (p == n) for p in pos for n in neg)
    return wins / (len(pos) * len(neg))


def has_answer(text: str, answers: list[str]) -> bool:
    low = text.lower()
    return any(a.strip() and a.strip().lower() in low for a in answers)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--work-dir", type=Path, required=True)
    parser.add_argument("--half", default="tune")
    parser.add_argument("--limit", type=int, default=60)
    parser.add_argument("-m", "--model", default=None)
    parser.add_argument("--decisions", default=",".join(DECISIONS),
                        help="comma-separated subset of " + ",".join(DECISIONS))
    parser.add_argument("--out", type=Path, default=None,
                        help="write the measured decisions into this JSON table (others' rows are kept)")
    args = parser.parse_args()
    wanted = set(args.decisions.split(","))
    if not wanted <= set(DECISIONS):
        parser.error(f"--decisions: choose from {','.join(DECISIONS)}")

    from longqa.ask.search import outline_choice
    from longqa.ask import decisions, prompts
    from longqa.ask.analysis.analyze import MODEL_TYPES
    from longqa.ask.settings import DEFAULTS
    from longqa.eval.data import half_of
    from longqa.models.resolve import load_embedder, load_generator
    from longqa.retrieve.hybrid import HybridRetriever
    from longqa.store import open_db
    from longqa.store.nodes import load_tree
    from longqa.structure.tree import walk
    from longqa import tokens
    from longqa.models.profiles import is_reader

    questions = [json.loads(line) for line in (EVALDATA / "dev.jsonl").open()]
    questions = [q for q in questions if half_of(q["id"]) == args.half]
    generator = load_generator(args.model, None)
    embedder = load_embedder(None, None)
    stores = {}
    for path in sorted((args.work_dir / "stores").glob("*.db")):
        db = open_db(path)
        docs = {str(Path(r["path"]).resolve()): r["id"] for r in db.query("SELECT id, path FROM documents")}
        stores[path.name.split("-")[0]] = (db, docs, HybridRetriever(db, embedder))
    scope_pairs, suff_pairs, unknown_pairs = [], [], []
    type_hits: dict[str, list[bool]] = {}
    used_hits: dict[str, list[bool]] = {}
    outline_hits, outline_chance = [], []
    expand_hits, expand_chance = [], []
    answer_moves: dict[bool, list[str]] = {True: [], False: []}  # gold read -> the moves made
    next_hits: dict[str, list[bool]] = {"reader": [], "rule": [], "reading on": []}
    used = 0
    started = time.process_time()
    # round-robin over datasets so a small --limit still covers all of them
    by_dataset: dict[str, list[dict]] = {}
    for q in questions:
        by_dataset.setdefault(q["dataset"], []).append(q)
    ordered = [q for group in zip(*[iter_pad(v) for v in by_dataset.values()]) for q in group if q]
    for q in ordered:
        if used >= args.limit:
            break
        if q["dataset"] not in stores:
            continue
        db, docs, retriever = stores[q["dataset"]]
        ids = [docs.get(str((EVALDATA / d).resolve())) for d in q["docs"]]
        if None in ids:
            continue
        used += 1
        question = " ".join(q["question"].split())
        # scope and type
        if wanted & {"scope", "type"}:
            probs = decisions.scope(generator, question)  # as ask asks it of this model (a reader in its chat)
            p_global = probs["global"] / ((probs["global"] + probs["local"]) or 1.0)
            scope_pairs.append((p_global, q["metric"] == "judge"))
            label = "global" if p_global >= 0.5 else "local"
        if "type" in wanted:
            types = generator.label_probs(prompts.analysis_prompt(question, label),
                                          [f" {t}" for t in prompts.TYPES])
            picked = max(types, key=types.get).strip()
            type_hits.setdefault(gold_type(q), []).append(picked == gold_type(q))
            if gold_type(q) in MODEL_TYPES:  # the choice as ask makes it: only between these two
                two = generator.label_probs(prompts.analysis_prompt(question, label),
                                            [f" {t}" for t in MODEL_TYPES])
                used_hits.setdefault(gold_type(q), []).append(max(two, key=two.get).strip() == gold_type(q))
        # first-stage leaves for the outline and sufficiency
        first = retriever.retrieve(question, "both", ids)
        ranked = [c.node_id for c in first.candidates]
        if not ranked:
            continue
        roots = [load_tree(db, d) for d in ids]
        texts = {n.id: n.text for r in roots for n in walk(r) if n.is_leaf}
        for group in (ranked[:3], ranked[3:6]) if "sufficiency" in wanted else ():
            shown = [tokens.truncate(" ".join(texts[i].split()), DEFAULTS.search.probe_tokens) for i in group if i in texts]
            if shown:
                p = decisions.sufficiency(generator, question, shown)
                holds = has_answer(" ".join(texts[i] for i in group if i in texts), q["answers"])
                suff_pairs.append((p, holds))
                if is_reader(generator):
                    unknown_pairs.append((1.0 - p_unknown(generator, question, shown), holds))
        if "next" in wanted and is_reader(generator) and gold_type(q) == "multi-bridge":
            next_probe(generator, retriever, question, q, ids, ranked, texts, next_hits)
        if "router" in wanted:
            route_probe(generator, question, q, roots, ranked, expand_hits, expand_chance, answer_moves)
        if "outline" not in wanted:
            continue
        sections = outline_choice.candidate_sections(roots, first.scores())
        titles = {r.doc_id: r.title for r in roots}
        choice = outline_choice.choose_sections(generator, question, sections, titles)
        gold = [sid for _, sid, _ in choice.shown
                if has_answer(" ".join(n.text for n in walk(next(s for s in sections if s.id == sid)) if n.is_leaf),
                              q["answers"])]
        if len(gold) == 1 and choice.probs:
            outline_hits.append(max(choice.probs, key=choice.probs.get) == gold[0])
            outline_chance.append(1 / len(choice.shown))

    rows = []
    scope_auc = auc(scope_pairs)
    rows.append(("scope (R_q)", len(scope_pairs), scope_auc, 0.5))
    present = [c for c in type_hits if type_hits[c]]
    balanced = sum(sum(type_hits[c]) / len(type_hits[c]) for c in present) / len(present) if present else None
    rows.append(("type (5 labels)", sum(len(v) for v in type_hits.values()), balanced,
                 1 / len(present) if present else None))
    two = [c for c in used_hits if used_hits[c]]
    rows.append(("type (as used)", sum(len(v) for v in used_hits.values()),
                 sum(sum(used_hits[c]) / len(used_hits[c]) for c in two) / len(two) if two else None,
                 1 / len(two) if two else None))
    rows.append(("outline choice", len(outline_hits), sum(outline_hits) / len(outline_hits) if outline_hits else None,
                 sum(outline_chance) / len(outline_chance) if outline_chance else None))
    rows.append(("sufficiency", len(suff_pairs), auc(suff_pairs), 0.5))
    rows.append(("sufficiency-from-answer", len(unknown_pairs), auc(unknown_pairs), 0.5))
    if next_hits["reader"]:
        share = {k: sum(v) / len(v) for k, v in next_hits.items()}
        rows.append(("next-query", len(next_hits["reader"]), share["reader"], share["reading on"]))
        rows.append(("next-query-rule", len(next_hits["rule"]), share["rule"], share["reading on"]))
    rows.append(("router-expand", len(expand_hits), sum(expand_hits) / len(expand_hits) if expand_hits else None,
                 sum(expand_chance) / len(expand_chance) if expand_chance else None))
    answered = {label: [m == "ANSWER" for m in moves] for label, moves in answer_moves.items()}
    rows.append(("router-answer", sum(len(v) for v in answered.values()),
                 (sum(answered[True]) / len(answered[True]) + 1 - sum(answered[False]) / len(answered[False])) / 2
                 if all(answered.values()) else None, 0.5))
    rows = [row for row in rows if row[0].split(" ")[0].split("-")[0] in wanted]
    print(f"model: {generator.name}; {used} questions of the {args.half} half; "
          f"{time.process_time() - started:.1f} CPU s; load average {os.getloadavg()[0]:.2f}")
    print(f"{'decision':<16} {'n':>4} {'skill':>6} {'chance':>6} {'weight':>6}")
    for name, n, skill, chance in rows:
        if skill is None or chance is None:
            print(f"{name:<16} {n:>4} {'–':>6} {'–':>6} {'–':>6}")
            continue
        weight = max(0.0, (skill - chance) / (1 - chance))
        print(f"{name:<16} {n:>4} {skill:>6.3f} {chance:>6.3f} {weight:>6.3f}")
    for c in present:
        print(f"  type {c}: {sum(type_hits[c])}/{len(type_hits[c])}")
    if args.out is not None:
        from longqa.models.profiles import profile_of

        profile = profile_of(generator)  # skill.py looks a profile's table up by its name
        write_table(args.out, profile.name if profile else model_family(generator.name), rows, used, args,
                    measured_with=generator.name)
    for label, moves in answer_moves.items():
        if moves:
            counts = {kind: moves.count(kind) for kind in sorted(set(moves))}
            print(f"  router moves with a {'gold' if label else 'non-gold'} leaf read: {counts}")


# The rows that decide something in `ask`, by the name longqa.models.skill looks them up under.
USED_AS = {"scope (R_q)": "scope", "type (as used)": "type", "outline choice": "outline",
           "sufficiency": "sufficiency", "router-expand": "router-expand", "router-answer": "router-answer",
           "next-query": "next-query"}


def model_family(name: str) -> str:
    """The model a generator's name names, without its quantisation ("gemma-3-270m" of
    "gemma-3-270m-q4_k_m"): another quantisation of the same model is weighted by these figures."""
    return re.sub(r"[-._](?:i?q\d\w*|f16|f32|bf16)$", "", name, flags=re.I)


def write_table(path: Path, model: str, rows: list, used: int, args, measured_with: str) -> None:
    """The measured decisions of `model` (a profile's name, or a file's model family) into the JSON
    table at `path`, keeping other models' rows and, for this model, the decisions not measured in
    this run."""
    import datetime
    import subprocess

    table = json.loads(path.read_text(encoding="utf-8")) if path.exists() else {"models": {}}
    entry = table["models"].setdefault(model, {"decisions": {}})
    entry["measured_with"] = measured_with
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=REPO, capture_output=True,
                            text=True).stdout.strip()
    run = {"command": "python bench/decisions.py " + " ".join(sys.argv[1:]), "commit": commit,
           "date": datetime.date.today().isoformat(), "half": args.half, "questions": used,
           "load": round(os.getloadavg()[0], 2)}
    for name, n, skill, chance in rows:
        if name in USED_AS and skill is not None and chance is not None:
            entry["decisions"][USED_AS[name]] = {"skill": round(skill, 4), "chance": round(chance, 4), "n": n,
                                                 "run": run}
    path.write_text(json.dumps(table, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    print(f"wrote {path}")


def holds_gold(text: str, q: dict) -> bool:
    """A gold answer string in `text`; for yes/no and free-form answers, `text` lies inside a gold
    evidence passage or holds one (80% of the tokens of one in one window)."""
    from longqa.eval.metrics import answer_in_context, tokens_of, window_coverage

    found = answer_in_context(q["answers"], text)
    if found is not None:
        return found
    own = tokens_of(text)
    for passage in (tokens_of(e["text"]) for e in q.get("evidence") or []):
        if passage and own and (window_coverage(own, passage) >= 0.8 or window_coverage(passage, own) >= 0.8):
            return True
    return False


def next_probe(generator, retriever, question, q, ids, ranked, texts, hits) -> None:
    """The next query's worth for one multi-bridge question (see the module docstring)."""
    from longqa.ask.search import bridge, queries
    from longqa.ask.settings import DEFAULTS
    from longqa import tokens

    top = [i for i in ranked if i in texts][:3]
    if not top or has_answer(" ".join(texts[i] for i in top), q["answers"]):
        return
    shown = [tokens.truncate(" ".join(texts[i].split()), DEFAULTS.search.probe_tokens) for i in top]

    def brings(query: str) -> bool:
        if not query:
            return False
        found = [c.node_id for c in retriever.retrieve(query, "both", ids).candidates if c.node_id in texts]
        return has_answer(" ".join(texts[i] for i in found[:5]), q["answers"])

    named = bridge.bridge_entities(question, [texts[i] for i in top], 4)
    rule = bridge.bridge_query(question, named[0][0], [named[0][1]]) if named else ""
    asked = queries.reader_next_query(generator, question, shown)
    hits["reader"].append(brings(asked))
    hits["rule"].append(brings(rule))
    hits["reading on"].append(has_answer(" ".join(texts[i] for i in [i for i in ranked if i in texts][3:8]),
                                         q["answers"]))
    print(f"  next query: {question[:70]!r} -> reader {asked!r} {hits['reader'][-1]}; rule {rule!r} "
          f"{hits['rule'][-1]}", flush=True)


def route_probe(generator, question, q, roots, ranked, expand_hits, expand_chance, answer_moves) -> None:
    """The router's two decisions on the best first-stage leaves, shown as the search shows them."""
    from longqa.ask.search import router
    from longqa.ask.settings import DEFAULTS
    from longqa.structure.tree import walk

    nodes, parent_of, order = {}, {}, {}
    for root in roots:
        for node in walk(root):
            nodes[node.id], order[node.id] = node, len(order)
            for child in node.children:
                parent_of[child.id] = node
    top = [i for i in ranked if i in nodes and nodes[i].is_leaf][: DEFAULTS.search.router_frontier]
    gold = [i for i in top if holds_gold(nodes[i].text, q)]
    if not gold or len(gold) == len(top):
        return
    s = DEFAULTS.search

    def view(shown, opened):
        return router.render(shown, opened, nodes, parent_of, order, s.router_tokens, s.router_hidden_words,
                             s.router_open_words)

    tree, kept = view(top, set())
    if len(kept) > 1 and set(kept) & set(gold):  # the cap may have cut some of the leaves
        move = router.decide(generator, question, tree, [], kept, s.router_max_answer, refuse=False)
        expand_hits.append(bool(move.ids) and move.ids[0] in gold)
        expand_chance.append(len(set(kept) & set(gold)) / len(kept))
    others = [i for i in top if i not in gold]
    rest = others[1:]
    for read, label in ((gold[0], True), (others[0], False)):
        tree, kept = view([read] + rest, {read})
        frontier = [i for i in kept if i != read]
        move = router.decide(generator, question, tree, kept, frontier, s.router_max_answer)
        answer_moves[label].append(move.kind)


def p_unknown(generator, question: str, shown: list[str]) -> float:
    """The reader's probability that its answer to `question` over the passages `shown` opens with
    "unknown": its answer prompt (ask/answer/reader.py), the passages numbered as there."""
    import math

    from longqa.ask import prompts
    from longqa.ask.analysis.asked import read as read_asked
    from longqa.ask.answer import reader

    passages = "\n".join(f"[{n}] {text}" for n, text in enumerate(shown, 1))
    prompt = generator.chat_prompt(reader.messages(read_asked(question), passages))
    return math.exp(generator.option_logprobs(prompt, [prompts.READER_UNKNOWN], max_tokens=1)[0])


def iter_pad(items: list) -> list:
    return items + [None] * 1000


if __name__ == "__main__":
    main()
