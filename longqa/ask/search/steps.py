"""The search's log: one `Step` per thing it did (a node added, a hop, the stop), in order.

`ask --json` prints each as `{"step": n, "action": ..., <details>}` and `ask --explain` as a
line; both read the log through `Step`, so the shape is written down once, here.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Step:
    """One logged step: its 1-based number, what it did (`add`, `bridge`, `stop`, ...) and the
    details that action records (in the order they were given, which `--json` keeps)."""

    number: int
    action: str
    details: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {"step": self.number, "action": self.action, **self.details}


def add_step(steps: list[Step], action: str, **details: Any) -> Step:
    """Append the next step of `steps` (numbered after the last) and return it."""
    step = Step(len(steps) + 1, action, details)
    steps.append(step)
    return step
