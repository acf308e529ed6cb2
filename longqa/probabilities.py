"""Scores turned into probabilities: one softmax and one logistic function for every package (the
rankers, the reader's confidence, a model's distribution over labels)."""

from __future__ import annotations

import math


def softmax(values: list[float]) -> list[float]:
    """Shares summing to 1, from scores or log-probabilities; -inf (unreachable) gets 0, and when
    nothing is finite every value gets an even share rather than a division by zero."""
    finite = [v for v in values if math.isfinite(v)]
    if not finite:
        return [1.0 / len(values)] * len(values) if values else []
    peak = max(finite)
    weights = [math.exp(v - peak) if math.isfinite(v) else 0.0 for v in values]
    total = sum(weights)
    return [w / total for w in weights]


def sigmoid(z: float) -> float:
    """The logistic function, clipped so that extreme scores cannot overflow."""
    return 1.0 / (1.0 + math.exp(-max(-30.0, min(30.0, z))))
