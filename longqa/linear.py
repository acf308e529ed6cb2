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
from longqa.models.regular_file import NotRegularFile, read_regular
from longqa.probabilities import softmax

MAX_WEIGHTS_BYTES = 16 << 20  # the shipped weights files are a few KB
# Larger than any learned weight, mean or scale could be: 1e308 is a number, but a score of
# it overflows to infinity and every comparison after that is meaningless.
MAX_MAGNITUDE = 1e9


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
    """A Stage from its JSON form ({"weights", "means", "scales", "bias"}; no bias: 0). Every value
    must be a number of at most MAX_MAGNITUDE (a ValueError names the first that is not): checked
    here, as the file is read, not when a question is scored."""
    weights, means, scales = (_numbers(table[part], part) for part in ("weights", "means", "scales"))
    return Stage(weights, means, scales, _number(table.get("bias", 0.0), "bias"))


def _numbers(table: object, where: str) -> dict[str, float]:
    if not isinstance(table, dict):
        raise ValueError(f"{where} is not a table of numbers")
    return {str(name): _number(value, f"{where}.{name}") for name, value in table.items()}


def _number(value: object, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not abs(value) <= MAX_MAGNITUDE:
        shown = repr(value) if len(repr(value)) <= 40 else repr(value)[:37] + "..."
        raise ValueError(f"{where} is {shown}, not a number of at most {MAX_MAGNITUDE:g}")
    return float(value)


def confidence_inputs(scores: list[float], on: str) -> list[float]:
    """What the confidence is calibrated on, per candidate: its score, or (`share`) the log-odds
    of its share of the softmax over the shortlist (the others' shares summed directly: 1 - p
    would round a near-certain share's odds away)."""
    if on == "score" or not scores:
        return list(scores)
    shares = softmax(scores)
    return [math.log(max(p, 1e-300) / max(sum(q for j, q in enumerate(shares) if j != i), 1e-300))
            for i, p in enumerate(shares)]


def read_weights(path: Path, what: str, build):
    """`build(table)` of the JSON weights file at `path`: a regular file of bounded size (never a
    pipe or a device, models/regular_file.py). A file that cannot be read, or whose table `build`
    refuses (ValueError, KeyError, TypeError), is a one-line error naming it and `what` it should be."""
    try:
        return build(json.loads(read_regular(Path(path), MAX_WEIGHTS_BYTES).decode("utf-8")))
    except NotRegularFile as exc:
        raise LongqaError(f"{path}: {exc}; not {what}") from None
    except (OSError, UnicodeDecodeError, ValueError, KeyError, TypeError, AttributeError, RecursionError) as exc:
        raise LongqaError(f"{path}: not {what} ({type(exc).__name__}: {exc})") from None


def read_stage(path: Path, known: set[str], what: str) -> tuple[Stage, dict] | None:
    """A one-stage weights file (weights, means, scales, bias, provenance) and its provenance; None
    when there is no such file. A file that cannot be read as one, or that weights a feature not in
    `known`, is a one-line error naming it and `what` it should be."""
    if not Path(path).exists():
        return None

    def build(table: dict) -> tuple[Stage, dict]:
        stage = stage_from(table)
        unknown = set(stage.weights) - set(known)
        if unknown:
            raise ValueError(f"unknown features {sorted(unknown)}")
        return stage, dict(table.get("provenance", {}))

    return read_weights(path, what, build)
