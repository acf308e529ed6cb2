"""The organizer: which expansions run for this question, then the tree refinement.

Every expansion is one logged step, and there are at most `max_steps` of them:
- multi-source → sub-questions (rule split of "A or B", else a grammar-constrained model split),
  each retrieved and merged;
- multi-bridge → state what is known and the next query (grammar-constrained), retrieve, repeat
  while the query is new;
- arithmetic → neighbouring leaves of the best hits, whole tables;
- evidence missing (the first retrieval does not show the answer) → wider granularity: neighbours
  and the outline's chosen section opened (RDR2's EXPAND). `--budget` stays a hard cap on the
  context, so the widened candidates compete for the same tokens.
"""

from __future__ import annotations

import time

from longqa import tokens
from longqa.ask import expand, outline, queries
from longqa.ask.evidence import holds_answer
from longqa.ask.refine import score_trees, select, select_flat
from longqa.store.nodes import load_tree
from longqa.structure.tree import Node, walk

MAX_DOCS = 3  # candidate documents whose trees are refined
EVIDENCE_MIN = 0.5  # below this the first retrieval is taken not to hold the evidence
PROBE_PASSAGES, PROBE_TOKENS = 3, 80  # ~300 prompt tokens: the check must stay cheap


class Planner:
    def __init__(self, pipeline, question, analysis, doc_ids, first, refined):
        self.p, self.question, self.analysis, self.doc_ids = pipeline, question, analysis, doc_ids
        self.refined = refined
        self.pool: dict[int, float] = first.scores()
        self.doc_of: dict[int, int] = dict(first.doc_of)
        self.asked: list[str] = [question]
        self.trees: dict[int, Node] = {}
        self.query_vector = None

    # -- the plan ----------------------------------------------------------------------------
    def run(self, timings: dict[str, float]):
        p, generator = self.p, self.p.generator
        budget = p.budget
        tick = time.perf_counter()
        if p.use_analysis:
            texts = [self._leaf_text(i) for i in self._top(PROBE_PASSAGES)]
            evidence, source = holds_answer(generator, self.question, texts, PROBE_TOKENS,
                                            self.refined.evidence.weights)
            self.analysis.evidence, self.analysis.decided_by["evidence"] = evidence, source
        timings["evidence_probe"] = time.perf_counter() - tick

        tick = time.perf_counter()
        if p.use_expansion:
            qtype = self.analysis.type
            if qtype == "multi-source":
                self._split()
            elif qtype == "multi-bridge":
                self._bridge()
            elif qtype == "arithmetic" and self._steps_left():
                self._step("neighbours", expand.neighbours(self.pool, self._roots()))
        timings["expansion"] = time.perf_counter() - tick

        roots = self._roots()
        documents = {d["id"]: d for d in p.db.query(
            f"SELECT id, title, path FROM documents WHERE id IN ({','.join('?' * len(roots))})",
            [r.doc_id for r in roots])}
        if not p.use_tree:
            leaves = [n for r in roots for n in walk(r) if n.is_leaf]
            return select_flat(leaves, self.pool, budget), documents, budget

        tick = time.perf_counter()
        choice = None
        if generator is not None:  # global selection is part of the tree refinement
            sections = outline.candidate_sections(roots, self.pool)
            choice = outline.choose_sections(generator, self.question, sections,
                                             {d: documents[d]["title"] for d in documents})
            titles = {section_id: title for _, section_id, title in choice.shown}
            self.refined.steps.append({"step": len(self.refined.steps) + 1, "action": "outline",
                                       "chosen": list(choice.weights), "shown": len(choice.shown),
                                       "titles": [titles[s] for s in choice.weights]})
        timings["outline"] = time.perf_counter() - tick

        if (p.use_expansion and self.analysis.evidence is not None
                and self.analysis.evidence < EVIDENCE_MIN and self._steps_left()):
            budget = self._widen(budget, roots, choice)
        tick = time.perf_counter()
        scored = score_trees(roots, self.pool, choice.weights if choice else {}, self.analysis.scope)
        selection = select(roots, scored, budget)
        timings["refine"] = time.perf_counter() - tick
        return selection, documents, budget

    # -- expansions --------------------------------------------------------------------------
    def _split(self) -> None:
        subs, source = queries.sub_questions(self.p.generator, self.question, self.p.max_steps)
        if not subs:
            self.refined.steps.append({"step": len(self.refined.steps) + 1, "action": "split-none",
                                       "source": source, "reason": "no new sub-question"})
        for sub in subs:
            if not self._steps_left():
                break
            self._retrieve_and_merge("split", sub, source=source)

    def _bridge(self) -> None:
        generator = self.p.generator
        while generator is not None and self._steps_left():
            context = self._top_text(PROBE_PASSAGES, PROBE_TOKENS)
            known, query = queries.next_query(generator, self.question, context)
            if not queries.is_new(query, self.asked):
                self.refined.steps.append({"step": len(self.refined.steps) + 1, "action": "bridge-stop",
                                           "known": known, "query": query, "reason": "query repeats"})
                return
            self._retrieve_and_merge("bridge", query, known=known)

    def _widen(self, budget: int, roots: list[Node], choice) -> int:
        added = expand.neighbours(self.pool, roots)
        opened = None
        if choice and choice.weights:
            retrieved = set(self.pool)
            by_id = {n.id: n for r in roots for n in walk(r)}
            for section_id in sorted(choice.weights, key=lambda s: -choice.weights[s]):
                section = by_id.get(section_id)
                if section and not any(leaf.id in retrieved for leaf in walk(section) if leaf.is_leaf):
                    similarity = self._similarity(section)
                    added.update(expand.route({**self.pool, **added}, section, similarity,
                                              choice.weights[section_id]))
                    opened = section_id
                    break
        self._step("widen", added, budget=budget, opened=opened)
        return budget

    # -- helpers -----------------------------------------------------------------------------
    def _retrieve_and_merge(self, action: str, query: str, **extra) -> None:
        tick = time.perf_counter()
        result = self.p.retriever.retrieve(query, self.analysis.pattern, self.doc_ids)
        self.asked.append(query)
        self.doc_of.update(result.doc_of)
        for c in result.candidates:
            self.refined.fused.setdefault(c.node_id, c)
        self._step(action, expand.merge(self.pool, result.scores()), query=query,
                   seconds=round(time.perf_counter() - tick, 4), **extra)

    def _step(self, action: str, added: dict[int, float], **extra) -> None:
        self.pool.update(added)
        self.refined.steps.append({"step": len(self.refined.steps) + 1, "action": action,
                                   "added": sorted(added), **extra})

    def _steps_left(self) -> bool:
        done = sum(1 for s in self.refined.steps if s["action"] not in ("outline",))
        return done < self.p.max_steps

    def _top(self, n: int) -> list[int]:
        return [i for i, _ in sorted(self.pool.items(), key=lambda kv: (-kv[1], kv[0]))[:n]]

    def _top_text(self, n: int, max_tokens: int) -> str:
        """The best `n` leaves of the pool, each cut to `max_tokens`, as one line of context."""
        return " ".join(tokens.truncate(" ".join(self._leaf_text(i).split()), max_tokens) for i in self._top(n))

    def _leaf_text(self, leaf_id: int) -> str:
        row = self.p.db.execute("SELECT text, doc_id FROM nodes WHERE id = ?", [leaf_id]).fetchone()
        self.doc_of.setdefault(leaf_id, row[1])
        return row[0]

    def _roots(self) -> list[Node]:
        """Trees of the best MAX_DOCS documents in the pool, best document first."""
        best: dict[int, float] = {}
        for leaf, score in self.pool.items():
            doc = self.doc_of.get(leaf)
            if doc is None:
                self._leaf_text(leaf)
                doc = self.doc_of[leaf]
            best[doc] = max(best.get(doc, 0.0), score)
        ranked = sorted(best, key=lambda d: (-best[d], d))[:MAX_DOCS]
        for doc in ranked:
            if doc not in self.trees:
                self.trees[doc] = load_tree(self.p.db, doc)
        return [self.trees[d] for d in ranked]

    def _similarity(self, section: Node) -> dict[int, float]:
        retriever = self.p.retriever
        if not retriever.uses_dense:
            return {}
        from longqa.store.vectors import load_vectors

        matrix = load_vectors(self.p.db, retriever.embedder.name)
        if self.query_vector is None:
            self.query_vector = retriever.embed(self.question)
        ids, scores = matrix.scores(self.query_vector, [section.doc_id])
        wanted = {n.id for n in walk(section) if n.is_leaf}
        return {int(i): float(s) for i, s in zip(ids, scores) if int(i) in wanted}

