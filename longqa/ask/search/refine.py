"""LongRefiner's adaptive refinement: score every node of the candidate trees, then pick nodes
greedily under a token budget.

- Local score LS: a leaf's fused retrieval score (0 when not retrieved); a parent's LS is the mean
  of its children's, so a section scores high only when most of it is relevant.
- Global score GS: 1 (or a soft weight) for sections chosen from the outline; every other node
  inherits its parent's GS split equally among the parent's children.
- Score = LS + R_q * GS: the more global the question, the more the outline choice counts.
- Selection: best score first; a node costs the tokens of its leaves not yet taken; a selected
  parent brings its children; when all children of a parent are in, the parent is too. The
  result is in document order.
- Continuation: a leaf whose text stops inside a sentence (a long PDF paragraph cut at the leaf
  size, an infobox cut between its label and its value) brings the leaf after it when that one
  is short, so the context never ends on "Judge term length" with "Life tenure" left out; a leaf
  that opens inside a sentence brings the leaf before it. A leaf that announces what follows (a
  statement's caption ending on "(In thousands)", a line ending on a colon) brings the leaves after
  it in its section and on its page, so an EBITDAR table's caption never comes without the table.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from longqa import tokens
from longqa.ask.settings import in_effect
from longqa.text.words import words
from longqa.tree_types import Node, walk


@dataclass
class Scored:
    node: Node
    local: float = 0.0
    global_: float = 0.0
    score: float = 0.0


@dataclass
class Selection:
    nodes: list[Node]  # selected top-level nodes (no selected node inside another), document order
    scores: dict[int, Scored]  # every scored node of the candidate trees, by id
    used: int  # tokens of the selected leaves' text
    budget: int
    leaf_ids: set[int] = field(default_factory=set)


def leaf_tokens(node: Node) -> int:
    """Budget cost of one leaf: its text counted with the project tokenizer (cl100k)."""
    cached = getattr(node, "_cost", None)
    if cached is None:
        cached = tokens.count(node.text)
        node._cost = cached  # type: ignore[attr-defined]
    return cached


def score_trees(
    roots: list[Node], leaf_scores: dict[int, float], section_weights: dict[int, float], scope: float
) -> dict[int, Scored]:
    """LS, GS and their combination for every node of `roots` (LongRefiner 1.5)."""
    scored: dict[int, Scored] = {}

    def local(node: Node) -> float:
        if node.is_leaf or not node.children:
            value = leaf_scores.get(node.id, 0.0) if node.is_leaf else 0.0
        else:
            value = sum(local(child) for child in node.children) / len(node.children)
        scored[node.id] = Scored(node, local=value)
        return value

    def global_(node: Node, inherited: float) -> None:
        own = section_weights.get(node.id, 0.0)
        value = own + inherited
        entry = scored[node.id]
        entry.global_ = value
        entry.score = entry.local + scope * value
        if node.children:
            share = value / len(node.children)
            for child in node.children:
                global_(child, share)

    for root in roots:
        local(root)
        global_(root, 0.0)
    return scored


def select(roots: list[Node], scored: dict[int, Scored], budget: int, min_relative: float | None = None,
           forced: list[Node] = (), continuation: int | None = None,
           duplicate_share: float | None = None, caption: int | None = None) -> Selection:
    """Greedy budgeted selection with parent => children and all-children => parent closure.

    `forced` nodes (the search loop's picks, in pick order) are taken first; the rest of the
    budget is filled best score first. Nodes under `min_relative` x the best score are never
    used to fill: barely related text only slows the generator's prefill down. A taken leaf that
    stops mid-sentence brings the next leaf of its document right away, and one that opens
    mid-sentence the leaf before, when that costs at most `continuation` tokens (0: off); one that
    announces what follows (a table's caption) brings the leaves after it in its section and on its
    page, up to `caption` tokens (0: off). A node whose new leaves all repeat text already taken
    (`duplicate_share` of their word trigrams) is passed over: the budget goes to text the context
    does not hold yet. Each number not given is the search setting in effect (fill_floor,
    continuation_tokens, duplicate_share, caption_tokens).
    """
    s = in_effect().search
    min_relative = s.fill_floor if min_relative is None else min_relative
    continuation = s.continuation_tokens if continuation is None else continuation
    duplicate_share = s.duplicate_share if duplicate_share is None else duplicate_share
    caption = s.caption_tokens if caption is None else caption
    parent_of = {child.id: node for root in roots for node in walk(root) for child in node.children}
    next_leaf, previous_leaf = _neighbour_leaves(roots) if continuation > 0 or caption > 0 else ({}, {})
    chosen: set[int] = set()  # nodes inside the selection (selected or covered by a selected parent)
    taken_leaves: set[int] = set()
    used = 0
    seen = _Trigrams()
    floor = max((s.score for s in scored.values()), default=0.0) * min_relative
    order = sorted(
        (s for s in scored.values() if s.score > 0 and s.score >= floor),
        key=lambda s: (-s.score, -s.node.depth, s.node.id),  # ties: the smaller node first
    )
    order = [scored.get(n.id) or Scored(n) for n in forced] + order

    def take(other: Node) -> None:
        """A leaf another one brings along (its continuation, a caption's table)."""
        nonlocal used
        used += leaf_tokens(other)
        taken_leaves.add(other.id)
        chosen.add(other.id)
        _close_upward(other, chosen, parent_of)

    for entry in order:
        node = entry.node
        if node.id in chosen or _covered(node, chosen, parent_of):
            continue
        new_leaves = [leaf for leaf in walk(node) if leaf.is_leaf and leaf.id not in taken_leaves]
        if not new_leaves and not node.is_leaf:
            continue  # an empty section adds nothing to the context
        cost = sum(leaf_tokens(leaf) for leaf in new_leaves)
        if used + cost > budget:
            continue
        if duplicate_share > 0 and new_leaves and all(seen.repeats(leaf, duplicate_share) for leaf in new_leaves):
            continue  # the context holds this text already
        used += cost
        if duplicate_share > 0:
            seen.add(new_leaves)
        taken_leaves.update(leaf.id for leaf in new_leaves)
        chosen.update(n.id for n in walk(node))
        _close_upward(node, chosen, parent_of)
        for leaf in new_leaves:
            if caption > 0 and announces_next(leaf.text):
                for other in announced(leaf, next_leaf, taken_leaves, min(caption, budget - used)):
                    take(other)
            for other, cut in ((next_leaf.get(leaf.id), stops_mid_sentence(leaf.text)),
                               (previous_leaf.get(leaf.id), starts_mid_sentence(leaf.text))):
                if other is not None and cut and other.id not in taken_leaves \
                        and leaf_tokens(other) <= continuation and used + leaf_tokens(other) <= budget:
                    take(other)
    tops = [
        n for root in roots for n in walk(root)
        if n.id in chosen and (n.id not in parent_of or parent_of[n.id].id not in chosen)
    ]
    return Selection(nodes=tops, scores=scored, used=used, budget=budget, leaf_ids=taken_leaves)


class _Trigrams:
    """The word trigrams of the leaves taken so far, to tell a repeated paragraph from a new one;
    each leaf's own trigrams are read once."""

    def __init__(self):
        self.taken: set[tuple[str, ...]] = set()
        self._of: dict[int, set[tuple[str, ...]]] = {}

    def of(self, leaf: Node) -> set[tuple[str, ...]]:
        if leaf.id not in self._of:
            said = words(leaf.text)
            self._of[leaf.id] = {tuple(said[i:i + 3]) for i in range(len(said) - 2)}
        return self._of[leaf.id]

    def repeats(self, leaf: Node, share: float) -> bool:
        own = self.of(leaf)
        return bool(own) and len(own & self.taken) >= share * len(own)

    def add(self, leaves: list[Node]) -> None:
        for leaf in leaves:
            self.taken |= self.of(leaf)


def stops_mid_sentence(text: str) -> bool:
    """True when `text` ends on a word or a comma: the sentence goes on in the next leaf. Text
    ending on a number (a table row) or on closing punctuation is complete."""
    tail = text.rstrip()
    return bool(tail) and (tail[-1].isalpha() or tail[-1] in ",-–")


# A table's units line, perhaps with its "(Unaudited)" after it: "(In thousands, except per share data)".
_UNITS_LINE = re.compile(r"\((?:[^()]*\b)?in (?:thousands|millions|billions)\b[^()]*\)(?:\s*\(unaudited\))?$", re.I)


def announces_next(text: str) -> bool:
    """True when `text` ends by announcing what follows: on a colon ("... was as follows ($ in
    millions):") or on a table's units line (a statement's caption)."""
    tail = text.rstrip()
    return tail.endswith(":") or bool(_UNITS_LINE.search(tail))


def announced(leaf: Node, next_leaf: dict[int, Node], taken: set[int], room: int) -> list[Node]:
    """The leaves after `leaf` in its section and on the page where it ends (a caption's table, a
    colon's list), in reading order, while they fit in `room` tokens; the first one already taken
    ends them. The section bounds what a page cannot: a text file is all one page, and a paragraph
    cut off after "comprises the following:" must not bring the next article."""
    out, cost, other = [], 0, next_leaf.get(leaf.id)
    while other is not None and other.page_start == leaf.page_end and other.parent_id == leaf.parent_id \
            and other.id not in taken:
        cost += leaf_tokens(other)
        if cost > room:
            break
        out.append(other)
        other = next_leaf.get(other.id)
    return out


def starts_mid_sentence(text: str) -> bool:
    """True when `text` opens on a lower-case word: the sentence began in the leaf before."""
    head = text.lstrip()
    return bool(head) and head[0].islower()


def _neighbour_leaves(roots: list[Node]) -> tuple[dict[int, Node], dict[int, Node]]:
    """Each leaf's following and preceding leaf in its document's reading order."""
    following: dict[int, Node] = {}
    preceding: dict[int, Node] = {}
    for root in roots:
        leaves = [n for n in walk(root) if n.is_leaf]
        for before, after in zip(leaves, leaves[1:]):
            following[before.id], preceding[after.id] = after, before
    return following, preceding


def _covered(node: Node, chosen: set[int], parent_of: dict[int, Node]) -> bool:
    parent = parent_of.get(node.id)
    while parent is not None:
        if parent.id in chosen:
            return True
        parent = parent_of.get(parent.id)
    return False


def _close_upward(node: Node, chosen: set[int], parent_of: dict[int, Node]) -> None:
    """All children of a parent selected => the parent is selected (App. A.4), recursively."""
    parent = parent_of.get(node.id)
    while parent is not None and all(child.id in chosen for child in parent.children):
        chosen.add(parent.id)
        parent = parent_of.get(parent.id)


def select_flat(leaves: list[Node], leaf_scores: dict[int, float], budget: int) -> Selection:
    """The no-tree ablation: best leaves by fused score under the budget, no propagation."""
    scored = {leaf.id: Scored(leaf, local=leaf_scores.get(leaf.id, 0.0), score=leaf_scores.get(leaf.id, 0.0))
              for leaf in leaves}
    used, picked = 0, []
    for entry in sorted(scored.values(), key=lambda s: (-s.score, s.node.id)):
        cost = leaf_tokens(entry.node)
        if entry.score <= 0 or used + cost > budget:
            continue
        used += cost
        picked.append(entry.node)
    picked.sort(key=lambda n: (n.doc_id or 0, n.ord))
    return Selection(nodes=picked, scores=scored, used=used, budget=budget, leaf_ids={n.id for n in picked})
