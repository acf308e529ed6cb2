"""When a search stops: PECAN's rule, shared by the tree search (loop.py) and the graph search
(graph.py) so the two are compared on the same stop.

Before each step: a cap on the nodes taken, or on the seconds spent. After each step's judgement
(loop.judge: coverage and the model's sufficiency): judged sufficient (>= confidence t_p)
`patience` (t_n) times. When nothing more fits or is left: "budget full" where the selection
fills 90 % of the budget, else the search's own word for running out ("frontier empty",
"graph exhausted").
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

FULL = 0.9  # a selection this close to the budget is full: what is left is too small for a node


@dataclass
class Stopping:
    max_nodes: int
    max_seconds: float
    confidence: float
    patience: int
    started: float = field(default_factory=time.perf_counter)
    sufficient_times: int = 0
    ever: bool = False  # judged sufficient at least once

    def capped(self, nodes: int) -> str | None:
        """The cap reached before the next step, or None."""
        if nodes >= self.max_nodes:
            return "max nodes"
        if self.seconds() >= self.max_seconds:
            return "max seconds"
        return None

    def judged(self, sufficiency: float, may_count: bool = True) -> bool:
        """Record one step's judgement; whether it counted as sufficient (`may_count` False holds
        it back, as a multi-hop question that has not hopped yet)."""
        if may_count and sufficiency >= self.confidence:
            self.ever = True
            self.sufficient_times += 1
            return True
        return False

    @property
    def done(self) -> bool:
        return self.sufficient_times >= self.patience

    def out_of_room(self, used: int, budget: int, empty: str) -> str:
        return "budget full" if used and used >= budget * FULL else empty

    def seconds(self) -> float:
        return time.perf_counter() - self.started
