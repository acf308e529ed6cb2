"""The organizer: candidate documents, whole-document scores, outline choice, the search loop.

1. Queries: the question, plus its sub-questions for a multi-source question (rule split of
   "A or B", else a grammar-constrained model split); each gets its own first-stage retrieval.
2. Candidate documents per query from document-level scores (retrieve/docscore.py), as many as
   score close to the best; every leaf of them gets a whole-document local score (retrieve/
   local.py; in the learned leaf ranker's order with `learned_leaves`, leaf_ranker.py), averaged
   up the trees with the outline's global score (refine.score_trees).
3. The search loop (search.py) picks nodes best-first from a frontier until the evidence
   suffices or a cap is hit, hopping through bridge entities for multi-bridge questions and
   giving each sub-question its own lane; precise mode retries with whole sections.
4. Spread: when the search ended without sufficient evidence, each of the question's best
   candidate documents gives its best leaf right after the search's best pick (`spread_docs`),
   so a question that fits several documents ("the warranty" asked of a shelf of product manuals)
   sees each of them, not only the first one's other clauses.
5. What budget is left is filled with the best-scoring nodes (LongRefiner's greedy selection,
   refine.select), so relevant material is never left out for lack of a step. Leaves found by
   bridge queries keep their scores for it, and the leaves next to each pick inside its section
   are scored up (Search.run_scores), so a passage running over several leaves stays whole.
`use_loop=False` skips 3 (plain LongRefiner); `use_expansion=False` skips sub-questions and hops.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from longqa.ask.search import outline_choice
from longqa.ask.search import queries
from longqa.models import profiles, skill
from longqa.ask.search import leaf_ranker
from longqa.ask.search.back_matter import asks_sources, weight_back_matter
from longqa.ask.search.refine import score_trees, select, select_flat
from longqa.ask.search.loop import Search
from longqa.ask.search.steps import add_step
from longqa.ask.settings import MAX_STEPS, SearchSettings
from longqa.retrieve.docscore import candidate_documents, document_scores, document_weights
from longqa.retrieve.local import local_scores
from longqa.store.documents import DocumentLabel, document_labels
from longqa.store.nodes import load_tree
from longqa.tree_types import Node, walk


@dataclass(frozen=True)
class SearchContext:
    """What the search may use of the pipeline: the store, the first-stage retriever, the generator
    (None: no model calls), and the switches that bound it."""

    db: object
    retriever: object
    generator: object
    settings: SearchSettings
    use_tree: bool = True
    use_expansion: bool = True
    max_steps: int = MAX_STEPS


class Planner:
    def __init__(self, context: SearchContext, question, analysis, doc_ids, first, refined):
        self.context, self.question, self.analysis, self.doc_ids = context, question, analysis, doc_ids
        self.refined = refined
        self.first = first
        self.settings = context.settings
        self.trees: dict[int, Node] = {}
        self.vectors = None
        self.search: Search | None = None
        self.search_scores: dict[int, float] = {}  # leaf scores from bridge queries
        self.asked: list[str] = [question]
        self.main_docs: list[int] = []  # the question's own candidate documents, best first

    # -- the plan ----------------------------------------------------------------------------
    def run(self, timings: dict[str, float], budget: int):
        """The selection for `budget` tokens (the pipeline's, or the larger pool that
        ask/excerpt.py cuts to sentences) and the candidate documents."""
        p, generator, s = self.context, self.context.generator, self.settings
        tick = time.perf_counter()
        subs: list[str] = []
        if p.use_expansion and self.analysis.type == "multi-source" and p.max_steps > 0:
            writer = generator if profiles.writes_completions(generator) else None
            subs, source = queries.sub_questions(writer, self.question, p.max_steps)
            for sub in subs:
                self._log("split", query=sub, source=source)
            if not subs:
                self._log("split-none", source=source, reason="no new sub-question")
        roots, main_scores = self.scores_for(self.question, self.first)
        sub_scores = []
        for sub in subs:
            result = self._retrieve(sub)
            sub_roots, scores = self.scores_for(sub, result)
            roots += [r for r in sub_roots if r not in roots]
            sub_scores.append(scores)
        timings["local_scores"] = time.perf_counter() - tick

        documents = self._documents(roots)
        if not p.use_tree:
            leaves = [n for r in roots for n in walk(r) if n.is_leaf]
            return select_flat(leaves, _combined(main_scores, sub_scores), budget), documents

        tick = time.perf_counter()
        choice = None
        # The outline choice steers only as far as the model's measured skill at it (skill.py);
        # at chance the call is not even made.
        outline_weight = skill.weight(generator, "outline")
        if generator is not None and outline_weight <= 0:
            self._log("outline-skipped", reason="the model's outline choice measured at chance")
        elif generator is not None:  # global selection is part of the tree refinement
            sections = outline_choice.candidate_sections(roots, main_scores)
            choice = outline_choice.choose_sections(generator, self.question, sections,
                                             {d: documents[d].title for d in documents})
            titles = {section_id: title for _, section_id, title in choice.shown}
            self._log("outline", chosen=list(choice.weights), shown=len(choice.shown),
                      titles=[titles[c] for c in choice.weights])
        timings["outline"] = time.perf_counter() - tick
        weights = {sid: w * outline_weight for sid, w in (choice.weights if choice else {}).items()
                   if w * outline_weight > 0}

        tick = time.perf_counter()
        scored = score_trees(roots, _combined(main_scores, sub_scores), weights, self.analysis.scope)
        picks: list[Node] = []
        sufficient = False  # the search judged its evidence sufficient
        graph_outcome = None
        if s.use_loop and s.search in ("graph", "auto"):
            from longqa.ask.search.graph import search_graphs

            graph_outcome = search_graphs(self, roots, budget, auto=s.search == "auto")
            if graph_outcome is not None:
                picks = graph_outcome.picks
                self.analysis.evidence = graph_outcome.sufficiency
        if s.use_loop and graph_outcome is None:
            max_hops = min(s.max_hops, p.max_steps) if p.use_expansion else 0
            self.search = Search(
                self.question, self.analysis.type, roots, scored, budget, s, self.refined.steps,
                generator=generator, model_weight=skill.weight(generator, "sufficiency"),
                term_weights=self.refined.evidence.weights, outline_sections=weights,
                lookup=self._lookup, model_query=self._model_query if asks_next_query(generator) else None,
                sub_questions=subs, sub_scores=sub_scores, max_hops=max_hops,
                found=self.refined.evidence.found, want=self.analysis.asked.want,
            )
            outcome = self.search.run()
            picks, sufficient = outcome.picks, outcome.sufficient
            roots = self.search.roots  # bridge hops may have added documents
            self.analysis.evidence = outcome.sufficiency
            self.analysis.decided_by["evidence"] = "model+rule" if skill.weight(generator, "sufficiency") > 0 else "rule"
            if len(roots) > len(documents):  # bridge hops added documents
                documents = self._documents(roots)
            if self.search_scores:  # what the bridge queries found counts when the budget is filled
                scored = score_trees(roots, _combined(main_scores, sub_scores, self.search_scores), weights,
                                     self.analysis.scope)
            for leaf_id, value in self.search.run_scores(s.fill_run_weight).items():
                entry = scored.get(leaf_id)
                if entry is not None and value > entry.score:
                    entry.score = value
        timings["search"] = time.perf_counter() - tick
        if not sufficient:  # the search found no sufficient evidence: look into the other candidates,
            # right after its best pick (its later picks would leave them no room)
            picks = picks[:1] + self._spread(roots, scored, picks[:1]) + picks[1:]
        tick = time.perf_counter()
        selection = select(roots, scored, budget, s.fill_floor, forced=picks, continuation=s.continuation_tokens,
                           duplicate_share=s.duplicate_share, caption=s.caption_tokens)
        timings["refine"] = time.perf_counter() - tick
        return selection, documents

    # -- scores per query --------------------------------------------------------------------
    def scores_for(self, query: str, result) -> tuple[list[Node], dict[int, float]]:
        """Candidate trees for `query` (from its first-stage `result`) and the local score of
        every leaf in them: whole-document BM25 + cosine (or, as an ablation, the first-stage
        scores only), at least the leaf's first-stage score, times the document prior."""
        first = result.scores()
        doc_of = dict(result.doc_of)
        best = document_scores(first, doc_of)
        ranked = candidate_documents(best, self.settings.doc_relative, self.settings.max_docs)
        prior = document_weights(best, ranked) if self.settings.doc_prior else {}
        roots = [self._tree(d) for d in ranked]
        if query == self.question:
            self.main_docs = list(ranked)
        leaves = {n.id: r.doc_id for r in roots for n in walk(r) if n.is_leaf}
        if not self.settings.whole_documents:
            scores = {leaf: first.get(leaf, 0.0) * prior.get(doc, 1.0) for leaf, doc in leaves.items()}
        else:
            vectors, query_vector = self.vectors_of(query)
            local = local_scores(self.context.db, query, list(leaves), ranked, self.analysis.pattern,
                                 vectors, query_vector, settings=self.context.retriever.settings)
            scores = {leaf: max(first.get(leaf, 0.0), local.fused[leaf]) * prior.get(doc, 1.0)
                      for leaf, doc in leaves.items()}
            ranker = leaf_ranker.load() if self.settings.learned_leaves else None
            if ranker is not None:
                table = leaf_ranker.features(leaf_ranker.LeafInputs(
                    query, roots, local.fused, local.bm25, local.dense, local.cosine, first,
                    document_weights(best, ranked), asks_sources(self.question)))
                return roots, ranker.scores(table, weight_back_matter(self.question, roots, scores))
        return roots, weight_back_matter(self.question, roots, scores)

    def _spread(self, roots: list[Node], scored: dict, picks: list[Node]) -> list[Node]:
        """The best leaf of each of the question's `spread_docs` best candidate documents without a
        node in `picks`, best document first. Asked when the search ended without judging its
        evidence sufficient: a question that names no document ("the warranty", "the paper") and
        fits several gets a look into each of them before the budget goes to more of the one that
        scored best."""
        count = self.settings.spread_docs
        if count <= 1 or len(self.main_docs) < 2:
            return []
        have = {pick.doc_id for pick in picks}
        by_doc = {r.doc_id: r for r in roots}
        extra = []
        for doc_id in self.main_docs[:count]:
            if doc_id in have or doc_id not in by_doc:
                continue
            leaves = [n for n in walk(by_doc[doc_id]) if n.is_leaf and n.id in scored and scored[n.id].score > 0]
            if leaves:
                extra.append(max(leaves, key=lambda n: (scored[n.id].score, -n.id)))
        if extra:
            self._log("spread", nodes=[n.id for n in extra])
        return extra

    def _lookup(self, query: str) -> dict[int, float]:
        """A bridge query: retrieve, add its candidate trees to the search, score their leaves."""
        result = self._retrieve(query)
        roots, scores = self.scores_for(query, result)
        if self.search is not None:
            self.search.add_roots(roots)
        self.search_scores.update(scores)
        return scores

    def _model_query(self, shown: list[str]) -> str | None:
        """The generator's next-step query (OkraLong's step-wise reasoner) from the evidence shown
        so far; None when it repeats a query already asked."""
        generator = self.context.generator
        if profiles.is_reader(generator):
            query = queries.reader_next_query(generator, self.question, shown[-3:])
        else:
            known, query = queries.next_query(generator, self.question, " ".join(shown[-3:]))
        if not queries.is_new(query, self.asked):
            return None
        self.asked.append(query)
        return query

    def _retrieve(self, query: str):
        result = self.context.retriever.retrieve(query, self.analysis.pattern, self.doc_ids)
        for c in result.candidates:
            self.refined.fused.setdefault(c.node_id, c)
        return result

    def vectors_of(self, query: str):
        retriever = self.context.retriever
        if not retriever.uses_dense:
            return None, None
        if self.vectors is None:
            from longqa.store.vectors import load_vectors

            self.vectors = load_vectors(self.context.db, retriever.embedder.name)
        return self.vectors, retriever.embed(query)

    # -- helpers -----------------------------------------------------------------------------
    def _tree(self, doc_id: int) -> Node:
        if doc_id not in self.trees:
            self.trees[doc_id] = load_tree(self.context.db, doc_id)
        return self.trees[doc_id]

    def _documents(self, roots: list[Node]) -> dict[int, DocumentLabel]:
        return document_labels(self.context.db, [r.doc_id for r in roots])

    def _log(self, action: str, **extra) -> None:
        add_step(self.refined.steps, action, **extra)


def asks_next_query(generator) -> bool:
    """Whether the search asks the model for a multi-hop question's next query when the evidence
    names no bridge entity: a completion model's bridge prompt always has; a reader's chat prompt
    does where its next query was measured to beat reading on (skill.py, bench/decisions.py)."""
    if profiles.is_reader(generator):
        return skill.weight(generator, "next-query") > 0
    return profiles.writes_completions(generator)


def _combined(main: dict[int, float], subs: list[dict[int, float]], *more: dict[int, float]) -> dict[int, float]:
    """Per leaf, the best score any query gave it."""
    merged = dict(main)
    for scores in [*subs, *more]:
        for leaf, value in scores.items():
            if value > merged.get(leaf, 0.0):
                merged[leaf] = value
    return merged
