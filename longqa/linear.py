"""Linear models whose weights are learned offline and shipped as JSON beside the code that reads them.

A `Stage` standardises each named feature with the mean and scale seen in training, weights it and
adds a bias; its `contributions` say what each feature added, so a choice can be explained. Scores
of a listwise model mean something only against the other items of the same list: `confidence_inputs`
turns them into each item's log-odds share of the list's softmax before they are calibrated.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path

from longqa.errors import LongqaError


@dataclass(frozen=True)
class Stage:
    """One logistic model: a weight, a mean and a scale per feature, and a bias."""

    weights: dict[str, float]
    means: dict[str, float]
    scales: dict[str, float]
    bias: float = 0.0

    def contributions(self, features: dict[str, float]) -> dict[str, float]:
        """Each feature's share of the score (its standardised value × its weight)."""
        return {name: weight * (features.get(name, 0.0) - self.means.get(name, 0.0)) / (self.scales.get(name) or 1.0)
                for name, weight in self.weights.items()}

    def score(self, features: dict[str, float]) -> float:
        return self.bias + sum(self.contributions(features).values())


def stage_from(table: dict) -> Stage:
    """A Stage from its JSON form ({"weights", "means", "scales", "bias"}; no bias: 0)."""
    return Stage(dict(table["weights"]), dict(table["means"]), dict(table["scales"]), float(table.get("bias", 0.0)))


def confidence_inputs(scores: list[float], on: str) -> list[float]:
    """What the confidence is calibrated on, per candidate: its score, or (`share`) the log-odds
    of its share of the softmax over the shortlist."""
    if on == "score" or not scores:
        return list(scores)
    peak = max(scores)
    weights = [math.exp(s - peak) for s in scores]
    total = sum(weights)
    return [math.log(max(w, 1e-300) / max(total - w, 1e-300)) for w in weights]


def sigmoid(z: float) -> float:
    """The logistic function, clipped so that extreme scores cannot overflow."""
    return 1.0 / (1.0 + math.exp(-max(-30.0, min(30.0, z))))


def read_stage(path: Path, known: set[str], what: str) -> tuple[Stage, dict] | None:
    """A one-stage weights file (weights, means, scales, bias, provenance) and its provenance; None
    when there is no such file. A file that cannot be read as one, or that weights a feature not in
    `known`, is a one-line error naming it and `what` it should be."""
    if not Path(path).exists():
        return None
    try:
        table = json.loads(Path(path).read_text(encoding="utf-8"))
        stage = stage_from(table)
        unknown = set(stage.weights) - set(known)
        if unknown:
            raise ValueError(f"unknown features {sorted(unknown)}")
        return stage, dict(table.get("provenance", {}))
    except (OSError, UnicodeDecodeError, ValueError, KeyError, TypeError, AttributeError) as exc:
        raise LongqaError(f"{path}: not {what} ({type(exc).__name__}: {exc})") from None
