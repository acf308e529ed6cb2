"""The answer ranker: a linear model over the named features (features.py) whose weights are learned,
never set by hand.

Two stages, both regularised logistic models fitted by `bench/answer_ranker.py` on the tune half of
the dev questions (a candidate is right when its token F1 with a gold answer is at least 0.5),
cross-validated by question, and written with the command, commit and data hash to ranker.json:
- `prior` reads every candidate without the model and keeps the shortlist the model scores;
- `final` reads the shortlist with the model's probabilities and picks the answer.
The final score's probability, recalibrated on out-of-fold answers (Platt scaling), is the answer's
confidence; below `threshold` the answer says it is unsure and shows the next candidates.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from longqa.ask.answer.candidates import Candidate
from longqa.errors import LongqaError

WEIGHTS_FILE = Path(__file__).with_name("ranker.json")


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


@dataclass(frozen=True)
class Ranker:
    prior: Stage
    final: Stage
    calibration: tuple[float, float] = (1.0, 0.0)  # confidence = sigmoid(a × final score + b)
    threshold: float = 0.0  # below this confidence the answer is shown as unsure
    provenance: dict = field(default_factory=dict)

    @property
    def features(self) -> list[str]:
        return sorted(set(self.prior.weights) | set(self.final.weights))

    def shortlist(self, pool: list[Candidate], size: int) -> list[Candidate]:
        """The `size` best candidates by the prior stage (each candidate's score set)."""
        for candidate in pool:
            candidate.score = self.prior.score(candidate.features)
        return sorted(pool, key=lambda c: -c.score)[:size]

    def rank(self, shortlist: list[Candidate]) -> list[Candidate]:
        """The shortlist by the final stage, best first, each with its calibrated probability."""
        a, b = self.calibration
        for candidate in shortlist:
            candidate.score = self.final.score(candidate.features)
            candidate.probability = 1.0 / (1.0 + math.exp(-(a * candidate.score + b)))
        return sorted(shortlist, key=lambda c: -c.score)


def _stage(table: dict) -> Stage:
    return Stage(dict(table["weights"]), dict(table["means"]), dict(table["scales"]), float(table["bias"]))


def from_dict(table: dict) -> Ranker:
    return Ranker(_stage(table["prior"]), _stage(table["final"]), tuple(table.get("calibration", (1.0, 0.0))),
                  float(table.get("threshold", 0.0)), dict(table.get("provenance", {})))


@lru_cache(maxsize=4)
def load(path: Path = WEIGHTS_FILE) -> Ranker:
    """The shipped ranker, or another weights file (read once per process); a file that cannot be
    read as one is a one-line error naming it."""
    try:
        return from_dict(json.loads(Path(path).read_text(encoding="utf-8")))
    except (OSError, UnicodeDecodeError, ValueError, KeyError, TypeError, AttributeError) as exc:
        raise LongqaError(f"{path}: not an answer ranker weights file ({type(exc).__name__}: {exc})") from None
