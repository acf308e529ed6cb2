"""Every tunable of the ask pipeline's retrieval and search, with its default and why.

`Pipeline(..., settings=SearchSettings(...))` overrides any of them; the `ask` CLI exposes the
stop rules as flags. Defaults were set on the TUNE half of the dev questions (`longqa eval --half
tune`); figures reported come from the other half.
"""

from __future__ import annotations

from dataclasses import dataclass, replace


@dataclass(frozen=True)
class SearchSettings:
    # -- which documents are refined (retrieve/docscore.py) ------------------------------------
    # A document is a candidate when its best first-stage leaf scores at least this x the best
    # document's; the cap keeps whole-document scoring cheap (LongRefiner refines the top 8).
    doc_relative: float = 0.5
    max_docs: int = 8
    # Leaves of a weaker candidate document are scaled by its score relative to the best one
    # (1.0 for the best document), so the budget goes first to the document the question is about.
    doc_prior: bool = True

    # -- local scores (retrieve/local.py) ------------------------------------------------------
    # Whole-document scoring: every leaf of every candidate document gets BM25 + cosine.
    # False = the old behaviour (only first-stage hits score, others 0), kept as an ablation.
    whole_documents: bool = True
    # Nodes scoring under this x the best are never chosen, not even to fill the budget.
    fill_floor: float = 0.1

    # -- the search loop (ask/search.py) -------------------------------------------------------
    use_loop: bool = True  # False: plain LongRefiner greedy selection (ablation)
    # PECAN's confidence t_p: the evidence suffices when the combined sufficiency reaches it.
    confidence: float = 0.75
    # PECAN's patience t_n: stop after this many steps judged sufficient.
    patience: int = 1
    # Caps: node-adding steps, and seconds spent in the loop (model probes included).
    max_nodes: int = 8
    max_seconds: float = 1.2
    # Frontier: the best `seed_leaves` leaves start it; the next leaf of a selected leaf enters
    # with `neighbour_weight` x that leaf's priority (the previous one with `previous_weight` x
    # it), a parent section with
    # `parent_weight` x it (GARLIC's successor score z, with tree edges for its attention edges).
    # The next leaf weighs more than the previous one: text announces what follows it (a table
    # after its lead-in sentence, an answer after the question it restates).
    seed_leaves: int = 8
    neighbour_weight: float = 0.7
    previous_weight: float = 0.6
    parent_weight: float = 0.5
    # Probe: each selected node is shown to the model cut to this many tokens (one KV-cached
    # prefix per question, so a step costs only the new node's tokens).
    probe_tokens: int = 80
    # Multi-hop: at most this many bridge hops, each a new query with an entity read from the
    # selected evidence; a bridge hit enters the frontier with its query's fused score x this.
    max_hops: int = 2
    # The first hop waits for this many picks: the best leaf alone is often a near miss, and the
    # bridge entity is read from the sentence (of all picks) closest to the question.
    hop_after: int = 3
    bridge_weight: float = 1.0
    # Which search: "tree" (this loop over the document trees) or "graph" (GARLIC's best-first
    # search over the information-point graph of `ingest --graph`, ask/graph_search.py; a
    # document without a current graph falls back to "tree"). The graph search adds points (one
    # sentence each) as well as leaves, so it may take more steps than the tree search.
    search: str = "tree"
    graph_max_nodes: int = 16
    # OkraLong's precise mode: when the loop ends judged insufficient (not merely out of time) but
    # retrieval found relevant material, retry once with the best whole sections (coarser granularity).
    precise_mode: bool = True
    # ... and keeps the sections only when the sufficiency check rises by at least this much.
    precise_margin: float = 0.05

    def but(self, **changes) -> "SearchSettings":
        return replace(self, **changes)


DEFAULT = SearchSettings()
