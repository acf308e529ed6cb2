"""GARLIC's greedy best-first search over the information-point graph, under PECAN's progress control.

The visited set S starts as every top-level point of the candidate documents' graphs (GARLIC)
plus the retrieval's best leaves (by the whole-document BM25 + cosine score the tree search seeds
from), visited first, best first, while they fit in `graph_seed_share` of the budget. Then each
step scores every unvisited node j by
    z_j + r_j,    z = Eᵀr over S: z_j = Σ_{i ∈ S} r_i · E_ij   (E: a node's edges one level down)
and visits the best. r_j is j's relevance to the question: GARLIC's embedding similarity averaged
with the IDF-weighted share of the question's words (`_similarities`), divided by its largest
value; r_i also stands in for PECAN's query attention (no second attention pass at ask time).
GARLIC divides z and the similarity each by its sum; an earlier version here divided each by its
largest value over the unvisited nodes. Both rescale z on its own, so the best-connected child
scores high however weakly related its parents are: the walk went down the top point's branch and
passed over the leaf most similar to the question (L-Eval tune half: one answer of 17 lost). As E's rows sum to 1,
z is already in r's units: a child inherits at most the relevance of its visited parents. Before
any visited node relates to the question (z all 0) relevance alone decides, so unconnected nodes
stay reachable.

Extractive points repeat their sentence at each level that picks it again; such copies are one
node here (visiting one visits all, and each passes its edges on), so the walk does not spend
steps descending through the same sentence.

Stopping (PECAN's dynamic progress control): after each visit the evidence is judged (the tree
search's `judge`: coverage rule plus the model's p(yes) on a question-first probe whose prefix
stays in the KV cache, so a step reads only the new node), and the tree search's stop ends it
(stopping.py: sufficient `patience` times, or a cap on nodes, tokens or seconds).

Measured (`longqa eval`, 2,000 tokens, cosine edges): the seeds and the units of z brought the
graph search from 0.118 to 0.353 answer recall on the L-Eval tune half (tree 0.235) and from 0.353
to 0.471 on the report half (tree 0.471); L-CiteEval ties the tree on both. With the edges removed
(z = 0) no answer changed on either half: on these documents the points' sentence-level
similarity, not the edges, is what the graph adds.

Context: a visited leaf, and the leaf a visited point's sentence comes from, are the picks (the
exact text, never the point alone); the answer stage cites them with their pages like any other
passage, and the organizer fills what budget is left with the best-scoring leaves.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from longqa import tokens
from longqa.ask.search.relevance import top_share
from longqa.ask.search.refine import leaf_tokens
from longqa.ask.search.loop import Outcome, judge
from longqa.ask.search.steps import Step, add_step
from longqa.ask.search.stopping import Stopping
from longqa.ask.settings import SearchSettings
from longqa.store.graph import Graph
from longqa.structure.tree import Node


@dataclass
class _Node:
    id: int
    level: int
    leaf: Node  # the leaf itself (level 0) or the leaf the point was taken from
    text: str
    vector: np.ndarray | None


class GraphSearch:
    def __init__(self, question: str, question_vector: np.ndarray | None, graphs: list[Graph],
                 leaves: dict[int, Node], budget: int, settings: SearchSettings, steps: list[Step], *,
                 generator=None, model_weight: float = 0.0, term_weights: dict[str, float] | None = None,
                 leaf_scores: dict[int, float] | None = None, want: str = "any"):
        self.question, self.budget, self.s, self.steps, self.want = question, budget, settings, steps, want
        self.generator, self.model_weight, self.term_weights = generator, model_weight, term_weights
        self.nodes: list[_Node] = []
        index: dict[int, int] = {}
        for graph in graphs:
            for node in graph.nodes:
                leaf = leaves.get(node.leaf_id)
                if leaf is None:
                    continue  # a leaf gone since the graph was built: its nodes are unusable
                index[node.id] = len(self.nodes)
                self.nodes.append(_Node(node.id, node.level, leaf, node.text if node.level else leaf.text, node.vector))
        # E as rows of (child index, weight) per parent index
        self.children: dict[int, list[tuple[int, float]]] = {}
        for graph in graphs:
            for parent, child, weight in graph.edge_list:
                if parent in index and child in index:
                    self.children.setdefault(index[parent], []).append((index[child], weight))
        # An extractive point's sentence comes back at each level that picks it again: the copies
        # (same leaf, same text) are one node for the search.
        same: dict[tuple[int, str], list[int]] = {}
        for i, node in enumerate(self.nodes):
            if node.level > 0:
                same.setdefault((node.leaf.id, " ".join(node.text.split())), []).append(i)
        self.copies = {i: [j for j in group if j != i] for group in same.values() if len(group) > 1 for i in group}
        self.similarity = self._similarities(question_vector)
        self.relevance = self._relevance()
        self.tops = [i for graph in graphs for i in self._top(graph, index)]
        self.seeds = self._seeds(leaf_scores or {})

    def _similarities(self, question_vector) -> np.ndarray:
        """Each node's relevance to the question: its embedding cosine (GARLIC's SBERT term) and
        the IDF-weighted share of the question's words it holds, each normalised to sum 1, averaged.
        The word share is ours: a 384-dimension MiniLM misses the names and numbers questions turn
        on (on 6 L-Eval/L-CiteEval questions, cosine alone lost one answer the tree search found)."""
        cosine = np.zeros(len(self.nodes))
        if question_vector is not None:
            q = np.asarray(question_vector, dtype=np.float32).ravel()
            for i, node in enumerate(self.nodes):
                if node.vector is not None and node.vector.shape[0] == q.shape[0]:
                    cosine[i] = max(0.0, float(node.vector @ q))
        words = np.array([top_share(self.question, [node.text], self.term_weights) for node in self.nodes])
        parts = [part / part.sum() for part in (cosine, words) if part.sum() > 0]
        return sum(parts) / len(parts) if parts else cosine

    def _relevance(self) -> np.ndarray:
        """r: the similarity divided by its largest value (z = Eᵀr is then in the same units)."""
        peak = self.similarity.max()
        return self.similarity / peak if peak > 0 else self.similarity

    def _seeds(self, leaf_scores: dict[int, float]) -> list[int]:
        """The retrieval's best leaves as node indices, best first, as many as fit in
        `graph_seed_share` of the budget: the tree search's seeds, so the graph search starts from
        what the retrieval is surest of and spends the rest of the budget where the graph leads."""
        leaves = [i for i, n in enumerate(self.nodes) if n.level == 0 and leaf_scores.get(n.leaf.id, 0.0) > 0]
        leaves.sort(key=lambda i: (-leaf_scores[self.nodes[i].leaf.id], i))
        room, seeds = self.s.graph_seed_share * self.budget, []
        for i in leaves:
            cost = leaf_tokens(self.nodes[i].leaf)
            if cost > room:
                break
            seeds.append(i)
            room -= cost
        return seeds

    def _top(self, graph: Graph, index: dict[int, int]) -> list[int]:
        """The graph's top-level points; none for a document too small to have points (its
        leaves are then found like any other node, by similarity)."""
        top = graph.levels
        return [index[n.id] for n in graph.nodes if top and n.level == top and n.id in index]

    # -- the loop -------------------------------------------------------------------------------
    def run(self) -> Outcome:
        rule = Stopping(self.s.graph_max_nodes, self.s.max_seconds, self.s.confidence, self.s.patience)
        shown = [tokens.truncate(" ".join(self.nodes[i].text.split()), self.s.probe_tokens) for i in self.tops]
        visited: list[int] = list(self.tops) + [j for i in self.tops for j in self.copies.get(i, ())]
        seen = set(visited)
        picks: list[Node] = []
        taken: set[int] = set()
        queue = [i for i in self.seeds if i not in seen]  # visited first, best first
        used, combined, stop = 0, 0.0, "graph exhausted"
        add_step(self.steps, "graph-start", top_points=len(self.tops), seeds=len(queue), nodes=len(self.nodes))
        while True:
            if (capped := rule.capped(len(picks))) is not None:
                stop = capped
                break
            best, reason = None, "graph"
            while queue and best is None:
                seed = queue.pop(0)
                if seed not in seen and self._fits(seed, taken, used):
                    best, reason = (seed, float(self.relevance[seed])), "seed"
            if best is None:
                best = self._next(visited, seen, taken, used)
            if best is None:
                stop = rule.out_of_room(used, self.budget, "graph exhausted")
                break
            choice, score = best
            node = self.nodes[choice]
            visited.append(choice)
            seen.add(choice)
            for copy in self.copies.get(choice, ()):  # the same sentence at another level: visited too
                if copy not in seen:
                    visited.append(copy)
                    seen.add(copy)
            shown.append(tokens.truncate(" ".join(node.text.split()), self.s.probe_tokens))
            step = {"node": node.leaf.id, "graph_node": node.id, "level": node.level,
                    "kind": "point" if node.level else "leaf", "reason": reason, "priority": round(score, 4)}
            if node.leaf.id not in taken:
                taken.add(node.leaf.id)
                used += leaf_tokens(node.leaf)
                picks.append(node.leaf)
            texts = [leaf.text for leaf in picks]  # what the answer will see (the top points only steer)
            coverage, p_yes, combined = judge(self.question, texts, shown, self.s, self.term_weights,
                                              self.generator, self.model_weight, self.want)
            add_step(self.steps, "add", **step, tokens=used, coverage=round(coverage, 4),
                     p_yes=None if p_yes is None else round(p_yes, 4), sufficiency=round(combined, 4))
            if rule.judged(combined) and rule.done:
                stop = "sufficient"
                break
        add_step(self.steps, "stop", reason=stop, nodes=len(picks), tokens=used, seconds=round(rule.seconds(), 4))
        return Outcome(picks, combined, rule.ever, stop)

    def _fits(self, i: int, taken: set[int], used: int) -> bool:
        leaf = self.nodes[i].leaf
        return leaf.id in taken or used + leaf_tokens(leaf) <= self.budget

    def _next(self, visited: list[int], seen: set[int], taken: set[int], used: int) -> tuple[int, float] | None:
        """The unvisited node with the best z + r that still fits the budget."""
        z = np.zeros(len(self.nodes))
        for i in visited:
            relevance = self.relevance[i]
            for child, weight in self.children.get(i, ()):
                z[child] += relevance * weight
        open_ = np.array([i not in seen for i in range(len(self.nodes))])
        if not open_.any():
            return None
        score = np.where(open_, z + self.relevance, -np.inf)
        for i in np.argsort(-score, kind="stable"):
            if open_[i] and self._fits(int(i), taken, used):
                return int(i), float(score[i])
        return None


def search_graphs(planner, roots: list[Node], budget: int, *, auto: bool = False) -> Outcome | None:
    """The graph search over the candidate documents that have a current graph (ask/organizer.py calls
    this for `--search graph` and `auto`); None when none has one, and the tree search runs instead.

    `auto` (`--search auto`) takes the graph only when every candidate document has a current one
    (a document without would otherwise be left to the budget fill), and says nothing when it
    does not: the tree search is then simply the search. On the tune half the graph search found
    more answers than the tree (L-Eval 0.353 against 0.235) and as many on the report half."""
    from longqa.models import skill
    from longqa.store.graph import graph_of, load_graph
    from longqa.structure.tree import walk

    db, generator = planner.context.db, planner.context.generator
    if auto:
        every = bool(roots) and all(graph_of(db, root.doc_id) is not None for root in roots)
        add_step(planner.refined.steps, "search-choice", search="graph" if every else "tree",
                 reason="every candidate document has a graph" if every
                 else "a candidate document has no current graph")
        if not every:
            return None
    graphs = [g for g in (load_graph(db, root.doc_id) for root in roots) if g is not None]
    missing = [root.doc_id for root in roots if root.doc_id not in {g.doc_id for g in graphs}]
    if missing:
        planner.refined.notes.append(
            f"no graph for document{'s' if len(missing) > 1 else ''} {', '.join(map(str, missing))} "
            "(build with `longqa ingest --graph`); " + ("searched the others" if graphs else "tree search used"))
    if not graphs:
        return None
    leaves = {n.id: n for root in roots for n in walk(root) if n.is_leaf}
    _, question_vector = planner.vectors_of(planner.question)
    embedder = getattr(planner.context.retriever, "embedder", None)
    for graph in graphs:  # vectors of another embedder (the store was reindexed since) never compare
        if embedder is None or graph.embed_model != embedder.name:
            for node in graph.nodes:
                node.vector = None
    # the retrieval's whole-document score of every leaf (the tree search's seeds), for r
    _, leaf_scores = planner.scores_for(planner.question, planner.first)
    search = GraphSearch(planner.question, question_vector, graphs, leaves, budget, planner.settings,
                         planner.refined.steps, generator=generator,
                         model_weight=skill.weight(generator, "sufficiency"),
                         term_weights=planner.refined.evidence.weights, leaf_scores=leaf_scores,
                         want=planner.analysis.asked.want)
    return search.run()
