"""One search loop over the candidate trees, for every question type.

State: the nodes selected so far (in pick order) and a frontier of nodes that may be added, each
with a priority (GARLIC's greedy best-first order, retrieval scores standing in for attention):
- the best leaves by LongRefiner's Score (LS + R_q x GS) and the sections chosen from the outline;
- the previous and next leaf of a selected leaf, and its parent section (tree edges standing in
  for GARLIC's attention edges: a neighbour enters with `neighbour_weight` x the leaf's priority,
  the parent with `parent_weight` x it, times the number of its children already selected when
  the rest of it fits in `parent_gather` x the budget, so a statement whose rows keep being
  picked comes in whole);
- for multi-bridge questions, the hits of a bridge query built from the selected evidence
  (bridge.py); for multi-source questions, one lane of seeds per sub-question, taken in turn so
  the sub-questions share the budget.
Each step adds the best frontier node that fits the budget and asks whether the evidence now
suffices: the IDF-weighted share of the question's words present, halved while nothing of the
asked shape (a figure, a date, a name) is there (a deterministic coverage rule),
combined with the model's p(yes) from label-token probabilities, weighted by the model's measured
skill (skill.py; at chance it does not steer). The probe prompt puts the question first and appends
each node, so the KV cache of the previous step is reused (PECAN's node-level caching).
Stop rules after PECAN, shared with the graph search (stopping.py): judged sufficient
(>= confidence t_p) `patience` (t_n) times, or a cap on nodes, tokens (the budget) or seconds. RDR2's router, where a generator may steer (router.py;
`router` setting, weighted by its measured skill), is asked before each step for one move on the
serialised subtree: EXPAND(id) raises that frontier node (to the top at full weight, so it is taken
next), ANSWER(ids) adds those nodes and stops, REFUSE stops. Then OkraLong's precise mode: a search that ended without
ever being sufficient (and not merely out of time or by the router's call), on a question with
relevant material, retries once with the best whole sections. Every step is logged for
`ask --json`'s `steps`.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Callable

from longqa import tokens
from longqa.ask import decisions
from longqa.ask.search import bridge
from longqa.ask.search import router
from longqa.ask.search.relevance import answer_shape_present, top_share
from longqa.ask.search.refine import Scored, leaf_tokens
from longqa.ask.search.steps import Step, add_step
from longqa.ask.search.stopping import Stopping
from longqa.ask.settings import SearchSettings
from longqa.structure.tree import Node, walk


def judge(question: str, texts: list[str], shown: list[str], settings: SearchSettings,
          term_weights: dict[str, float] | None, generator, model_weight: float,
          want: str = "any") -> tuple[float, float | None, float]:
    """Is the evidence enough? (coverage rule over `texts`, the model's p(yes) over the probe
    lines `shown` or None, the two combined by the model's measured weight). Shared by the tree
    search and the graph search (graph_search.py)."""
    coverage = top_share(question, texts, term_weights)
    if not answer_shape_present(want, question, texts):
        coverage *= settings.shape_missing  # about the question, but not (yet) the kind of thing it asks
    w = model_weight
    if generator is None or w <= 0:
        return coverage, None, coverage
    # Ask the model only when its answer can change the decision: with weight w its p(yes)
    # moves the combined value within [(1-w)c, (1-w)c + w].
    if (1 - w) * coverage >= settings.confidence or (1 - w) * coverage + w < settings.confidence:
        return coverage, None, (1 - w) * coverage + w * 0.5
    p_yes = decisions.sufficiency(generator, question, shown)
    return coverage, p_yes, w * p_yes + (1 - w) * coverage


@dataclass
class Lane:
    """One query's frontier: node id -> (priority, reason, relevance). The priority orders the
    picks; the relevance (the priority without a "go next" bonus) is what a picked node passes
    on to its neighbours, so a bonus never cascades along the document."""
    query: str
    frontier: dict[int, tuple[float, str, float]] = field(default_factory=dict)

    def offer(self, node: Node, relevance: float, reason: str, bonus: float = 0.0) -> None:
        old = self.frontier.get(node.id)
        if old is None or relevance + bonus > old[0]:
            self.frontier[node.id] = (relevance + bonus, reason, relevance)


@dataclass
class Outcome:
    picks: list[Node]  # selected nodes, in pick order
    sufficiency: float  # the last combined sufficiency
    sufficient: bool  # judged sufficient at least once
    stop: str  # why the loop ended


class Search:
    def __init__(
        self, question: str, qtype: str, roots: list[Node], scored: dict[int, Scored], budget: int,
        settings: SearchSettings, steps: list[Step], *, generator=None, model_weight: float = 0.0,
        term_weights: dict[str, float] | None = None, outline_sections: dict[int, float] | None = None,
        lookup: Callable[[str], dict[int, float]] | None = None,
        model_query: Callable[[list[str]], str | None] | None = None, sub_questions: list[str] = (),
        sub_scores: list[dict[int, float]] = (), max_hops: int = 0, found: bool = True, want: str = "any",
    ):
        self.question, self.qtype, self.roots, self.scored = question, qtype, roots, scored
        self.budget, self.s, self.steps = budget, settings, steps
        self.generator, self.model_weight = generator, model_weight
        self.term_weights = term_weights
        self.lookup, self.model_query, self.max_hops, self.found = lookup, model_query, max_hops, found
        self.want = want  # the kind of answer asked for (Asked.want): its shape is looked for
        self.nodes: dict[int, Node] = {}
        self.order: dict[int, int] = {}  # node id -> position in document order (router lines)
        self.parent_of: dict[int, Node] = {}
        self.next_leaf: dict[int, Node] = {}
        self.prev_leaf: dict[int, Node] = {}
        self._index(roots)
        self.lanes = [Lane(question)] + [Lane(q) for q in sub_questions]
        self._seed(self.lanes[0], {i: s.score for i, s in scored.items()}, outline_sections or {})
        for lane, leaf_scores in zip(self.lanes[1:], sub_scores):
            self._seed(lane, leaf_scores, {})
        self.picks: list[Node] = []
        self.taken: set[int] = set()  # leaf ids in the selection
        self.used = 0
        self.asked: list[str] = []  # bridge entities already queried
        self.bridged = False  # a node reached through a bridge query was picked
        self.shown: list[str] = []  # probe texts, in pick order
        self.hop_best: list[int] = []  # the best hit of each bridge hop
        self.router_weight = router.steering(settings.router, generator)  # 0: the router is not asked

    # -- the tree ---------------------------------------------------------------------------
    def _index(self, roots: list[Node]) -> None:
        for root in roots:
            leaves = []
            for node in walk(root):
                self.nodes[node.id] = node
                self.order.setdefault(node.id, len(self.order))
                for child in node.children:
                    self.parent_of[child.id] = node
                if node.is_leaf:
                    leaves.append(node)
            for a, b in zip(leaves, leaves[1:]):
                self.next_leaf[a.id], self.prev_leaf[b.id] = b, a

    def add_roots(self, roots: list[Node]) -> None:
        fresh = [r for r in roots if r.id not in self.nodes]
        self.roots += fresh
        self._index(fresh)

    def _seed(self, lane: Lane, scores: dict[int, float], sections: dict[int, float]) -> None:
        leaves = sorted((i for i in scores if i in self.nodes and self.nodes[i].is_leaf and scores[i] > 0),
                        key=lambda i: (-scores[i], i))
        for leaf in leaves[: self.s.seed_leaves]:
            lane.offer(self.nodes[leaf], scores[leaf], "best leaf")
        for section_id, weight in sections.items():
            if section_id in self.nodes:
                lane.offer(self.nodes[section_id], self.scored[section_id].score if section_id in self.scored
                           else weight, "outline")

    def _cost(self, node: Node) -> int:
        return sum(leaf_tokens(leaf) for leaf in walk(node) if leaf.is_leaf and leaf.id not in self.taken)

    def _covered(self, node: Node) -> bool:
        leaves = [leaf.id for leaf in walk(node) if leaf.is_leaf]
        return not leaves or all(leaf in self.taken for leaf in leaves)

    # -- the loop ---------------------------------------------------------------------------
    def run(self) -> Outcome:
        rule = Stopping(self.s.max_nodes, self.s.max_seconds, self.s.confidence, self.s.patience)
        best, stop = 0.0, "frontier empty"
        turn = 0
        if self.generator is not None and self.s.router == "auto" and self.router_weight <= 0:
            add_step(self.steps, "router-skipped", reason="the model's router moves measured at chance")
        while True:
            if (capped := rule.capped(len(self.picks))) is not None:
                stop = capped
                break
            if self.router_weight > 0:
                move = self._route(turn)
                if move.kind in ("ANSWER", "REFUSE"):
                    stop = f"router {move.kind.lower()}"
                    if move.kind == "ANSWER":
                        best = self.sufficiency()[2]
                    break
            picked = self._pop(turn)
            if picked is None:
                stop = rule.out_of_room(self.used, self.budget, "frontier empty")
                break
            turn += 1
            node, priority, reason, relevance = picked
            self.bridged = self.bridged or reason == "bridge"
            self._take(node)
            self._extend(node, relevance)
            coverage, p_yes, combined = self.sufficiency()
            best = combined
            add_step(self.steps, "add", node=node.id, kind=node.kind, reason=reason, priority=round(priority, 4),
                     tokens=self.used, coverage=round(coverage, 4),
                     p_yes=None if p_yes is None else round(p_yes, 4), sufficiency=round(combined, 4))
            # a multi-hop question's evidence counts only once it has hopped (or cannot)
            if rule.judged(combined, self.qtype != "multi-bridge" or self.bridged or not self._can_hop()):
                if rule.done:
                    stop = "sufficient"
                    break
            elif self.qtype == "multi-bridge" and self._can_hop() and len(self.picks) >= self.s.hop_after:
                self._hop()
        for leaf_id in self.hop_best:  # a hop's best hit always gets in, even after a cap stopped the loop
            node = self.nodes[leaf_id]
            if not self._covered(node) and self.used + self._cost(node) <= self.budget:
                self._take(node)
                add_step(self.steps, "add", node=node.id, kind=node.kind, reason="bridge (after stop)",
                         priority=None, tokens=self.used)
        add_step(self.steps, "stop", reason=stop, nodes=len(self.picks), tokens=self.used,
                 seconds=round(rule.seconds(), 4))
        outcome = Outcome(list(self.picks), best, rule.ever, stop)
        if (self.s.precise_mode and not rule.ever and self.found and self.picks and stop != "max seconds"
                and not stop.startswith("router")):
            outcome = self._precise(outcome)
        return outcome

    def _pop(self, turn: int):
        """The best fitting frontier node of the lane whose turn it is (lanes with nothing left
        that fits are skipped)."""
        lanes = self.lanes[turn % len(self.lanes):] + self.lanes[: turn % len(self.lanes)]
        for lane in lanes:
            while lane.frontier:
                node_id = max(lane.frontier, key=lambda i: (lane.frontier[i][0], self.nodes[i].depth, -i))
                priority, reason, relevance = lane.frontier.pop(node_id)
                node = self.nodes[node_id]
                if self._covered(node):
                    continue
                cost = self._cost(node)
                if self.used + cost > self.budget:
                    continue
                return node, priority, reason, relevance
        return None

    def _take(self, node: Node) -> None:
        new = [leaf for leaf in walk(node) if leaf.is_leaf and leaf.id not in self.taken]
        self.used += sum(leaf_tokens(leaf) for leaf in new)
        self.taken.update(leaf.id for leaf in new)
        self.picks.append(node)
        text = " ".join(leaf.text for leaf in new)
        self.shown.append(tokens.truncate(" ".join(text.split()), self.s.probe_tokens))

    def _extend(self, node: Node, relevance: float) -> None:
        """Neighbours and the parent of a picked leaf join the frontier of the main lane."""
        lane = self.lanes[0]
        if node.is_leaf:
            for neighbour, weight in ((self.next_leaf.get(node.id), self.s.neighbour_weight),
                                      (self.prev_leaf.get(node.id), self.s.previous_weight)):
                if neighbour is not None and neighbour.id not in self.taken:
                    own = self.scored[neighbour.id].score if neighbour.id in self.scored else 0.0
                    lane.offer(neighbour, max(own, weight * relevance), "neighbour")
        parent = self.parent_of.get(node.id)
        if parent is not None and parent.kind != "document":
            own = self.scored[parent.id].score if parent.id in self.scored else 0.0
            gathered = 1
            if self.s.parent_gather > 0 and self._cost(parent) <= self.s.parent_gather * self.budget:
                gathered = max(1, sum(1 for child in parent.children if self._covered(child)))
            lane.offer(parent, max(own, self.s.parent_weight * relevance * gathered), "parent")

    def run_scores(self, weight: float, reach: int = 2) -> dict[int, float]:
        """Leaves up to `reach` places after each picked leaf, inside its section, with
        weight^distance x the pick's score (before it: also x previous_weight / neighbour_weight,
        the loop's own proportion): the fill then extends each pick into a contiguous run of text.
        Runs stop at the section's end: the next article or section is another passage."""
        found: dict[int, float] = {}
        if weight <= 0:
            return found
        back = self.s.previous_weight / self.s.neighbour_weight if self.s.neighbour_weight > 0 else 0.0
        for pick in self.picks:
            for leaf in (n for n in walk(pick) if n.is_leaf):
                base = self.scored[leaf.id].score if leaf.id in self.scored else 0.0
                section = self.parent_of.get(leaf.id)
                for links, start in ((self.next_leaf, base), (self.prev_leaf, base * back)):
                    node, value = leaf, start
                    for _ in range(reach):
                        node = links.get(node.id)
                        value *= weight
                        if node is None or node.id in self.taken or self.parent_of.get(node.id) is not section:
                            break
                        found[node.id] = max(found.get(node.id, 0.0), value)
        return found

    # -- RDR2's router ---------------------------------------------------------------------
    def _route(self, turn: int) -> router.Action:
        """Ask the router for one move on the selected nodes and the best frontier nodes that still
        fit; act on EXPAND and ANSWER here (the caller stops the loop on ANSWER and REFUSE)."""
        started = time.perf_counter()
        frontier: dict[int, float] = {}
        for lane in self.lanes:
            for node_id, (priority, _, _) in lane.frontier.items():
                frontier[node_id] = max(priority, frontier.get(node_id, priority))
        fitting = [i for i in sorted(frontier, key=lambda i: (-frontier[i], -self.nodes[i].depth, i))
                   if not self._covered(self.nodes[i]) and self.used + self._cost(self.nodes[i]) <= self.budget]
        fitting = fitting[: self.s.router_frontier]
        selected = [pick.id for pick in self.picks]
        if not fitting:  # nothing left to read: the loop ends on its own, no call needed
            return router.NO_ACTION
        tree, shown = router.render(selected + fitting, self.taken, self.nodes, self.parent_of, self.order,
                                    self.s.router_tokens, self.s.router_hidden_words, self.s.router_open_words)
        expand_ids = [i for i in shown if i in frontier]
        room = min(self.s.router_max_answer, self.s.max_nodes - len(self.picks))  # >= 1: the loop checked
        move = router.decide(self.generator, self.question, tree, shown, expand_ids, room)
        added = []
        if move.kind == "EXPAND":  # raised by the router's weight x the gap to the top (w = 1: next)
            node_id = move.ids[0]
            lane = next(lane for lane in self.lanes if node_id in lane.frontier)
            priority, _, relevance = lane.frontier[node_id]
            top = max(frontier.values())
            raised = priority + self.router_weight * (top - priority + 1.0)
            turn_lane = self.lanes[turn % len(self.lanes)]  # the lane _pop looks at first
            turn_lane.frontier[node_id] = (raised, "router", relevance)
        elif move.kind == "ANSWER":
            for node_id in move.ids:
                node = self.nodes[node_id]
                if (len(self.picks) < self.s.max_nodes and not self._covered(node)
                        and self.used + self._cost(node) <= self.budget):
                    self._take(node)
                    added.append(node_id)
        add_step(self.steps, "router", move=move.kind, ids=list(move.ids), added=added, shown=len(shown),
                 tokens=self.used, reply=move.raw.strip()[:80], seconds=round(time.perf_counter() - started, 4))
        return move

    # -- sufficiency ------------------------------------------------------------------------
    def sufficiency(self) -> tuple[float, float | None, float]:
        """(coverage rule, model p(yes) or None, combined by the model's measured weight)."""
        texts = [leaf.text for pick in self.picks for leaf in walk(pick) if leaf.is_leaf]
        return judge(self.question, texts, self.shown, self.s, self.term_weights, self.generator, self.model_weight,
                     self.want)

    # -- multi-hop --------------------------------------------------------------------------
    def _can_hop(self) -> bool:
        return self.lookup is not None and len(self.asked) < self.max_hops

    def _hop(self) -> None:
        texts = [leaf.text for pick in self.picks for leaf in walk(pick) if leaf.is_leaf]
        fresh = [(e, s) for e, s in bridge.bridge_entities(self.question, texts, 4, self.term_weights)
                 if e.lower() not in {a.lower() for a in self.asked}]
        source = "rule"
        if fresh:
            entity, sentence = fresh[0]
            query = bridge.bridge_query(self.question, entity, [sentence])
        elif self.model_query is not None:  # no name in the evidence: the model states the next query
            query, entity, source = self.model_query(self.shown), None, "model"
            if not query:
                self.max_hops = len(self.asked)  # the model has nothing new either: stop hopping
                return
        else:
            return
        self.asked.append(entity or query)
        hits = self.lookup(query)
        if entity:  # the next hop's passage names the entity: prefer the hits whose text does
            hits = bridge.naming(hits, self.nodes, entity, self.question) or hits
        lane = self.lanes[0]
        offered = []
        for leaf_id, score in sorted(hits.items(), key=lambda kv: (-kv[1], kv[0]))[: self.s.seed_leaves]:
            node = self.nodes.get(leaf_id)
            if node is not None and leaf_id not in self.taken and score > 0:
                # The best hit of the hop goes next (ahead of every seed); the others compete.
                lane.offer(node, self.s.bridge_weight * score, "bridge", bonus=0.0 if offered else 1.0)
                offered.append(leaf_id)
        self.hop_best += offered[:1]
        add_step(self.steps, "bridge", entity=entity, query=query, source=source, added=offered)

    # -- OkraLong's precise mode ------------------------------------------------------------
    def _precise(self, outcome: Outcome) -> Outcome:
        """Coarser granularity: the smallest enclosing section of each of the best picks, whole,
        kept only when the sufficiency check prefers it."""
        sections: list[Node] = []
        room = self.budget
        for pick in outcome.picks[:3]:
            parent = self.parent_of.get(pick.id) if pick.is_leaf else pick
            if parent is None or parent.kind == "document" or parent in sections:
                continue
            cost = sum(leaf_tokens(leaf) for leaf in walk(parent) if leaf.is_leaf)
            if cost <= room:
                sections.append(parent)
                room -= cost
        if not sections:
            return outcome
        before = (list(self.picks), set(self.taken), self.used, list(self.shown))
        self.picks, self.taken, self.used, self.shown = [], set(), 0, []
        for section in sections:
            self._take(section)
        for pick in before[0]:
            if not self._covered(pick) and self.used + self._cost(pick) <= self.budget:
                self._take(pick)
        coverage, p_yes, combined = self.sufficiency()
        kept = combined >= outcome.sufficiency + self.s.precise_margin
        add_step(self.steps, "precise", sections=[s.id for s in sections],
                 sufficiency_before=round(outcome.sufficiency, 4), sufficiency=round(combined, 4), kept=kept)
        if kept:
            return Outcome(list(self.picks), combined, combined >= self.s.confidence, outcome.stop)
        self.picks, self.taken, self.used, self.shown = before
        return outcome
