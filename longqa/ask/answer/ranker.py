"""The answer ranker: a linear model over the named features (features.py) whose weights are learned,
never set by hand.

Two stages, both regularised logistic models fitted by `bench/answer_ranker.py` on the tune half of
the dev questions (a candidate is right when its token F1 with a gold answer is at least 0.5),
cross-validated by question, and written with the command, commit and data hash to ranker.json:
- `prior` reads every candidate without the model and keeps the shortlist the model scores;
- `final` reads the shortlist with the model's probabilities and picks the answer.
Each stage is fitted either pointwise (a logistic model of each candidate being right) or listwise
(a softmax over each question's candidates); the fit keeps whichever cross-validates better. The
confidence is the final score recalibrated on out-of-fold answers (Platt scaling): of the score
itself for a pointwise fit, of the candidate's share of the shortlist's softmax (as log-odds) for a
listwise one, whose scores mean something only against each other. Below `threshold` the answer
says it is unsure and shows the next candidates.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from longqa.ask.answer.candidates import Candidate
from longqa.linear import Stage, confidence_inputs, read_weights, stage_from
from longqa.probabilities import sigmoid

WEIGHTS_FILE = Path(__file__).with_name("ranker.json")


@dataclass(frozen=True)
class Ranker:
    prior: Stage
    final: Stage
    # confidence = sigmoid(final × calibrated input + bias)
    calibration: dict[str, float] = field(default_factory=lambda: {"final": 1.0, "bias": 0.0})
    calibrated_on: str = "score"  # score | share: the input of the calibration (see `confidence_inputs`)
    threshold: float = 0.0  # below this confidence the answer is shown as unsure
    provenance: dict = field(default_factory=dict)

    @property
    def features(self) -> list[str]:
        return sorted(set(self.prior.weights) | set(self.final.weights))

    def shortlist(self, pool: list[Candidate], size: int) -> list[Candidate]:
        """The `size` best answer candidates by the prior stage, then the no-answer candidate
        (every candidate's prior score set)."""
        for candidate in pool:
            candidate.score = self.prior.score(candidate.features)
        spans = sorted((c for c in pool if c.kind != "none"), key=lambda c: -c.score)[:size]
        return spans + [c for c in pool if c.kind == "none"]

    def rank(self, shortlist: list[Candidate]) -> list[Candidate]:
        """The shortlist by the final stage, best first, each with its calibrated probability."""
        for candidate in shortlist:
            candidate.score = self.final.score(candidate.features)
        inputs = confidence_inputs([c.score for c in shortlist], self.calibrated_on)
        for candidate, value in zip(shortlist, inputs):
            candidate.probability = self.confidence(value)
        return sorted(shortlist, key=lambda c: -c.score)

    def confidence(self, value: float) -> float:
        """The calibrated probability that a candidate is right, from its calibrated input (its
        final score or its share of the shortlist, `confidence_inputs`): monotone in the score, so
        an alternative is never surer than the answer."""
        c = self.calibration
        return sigmoid(c.get("final", 1.0) * value + c.get("bias", 0.0))


def from_dict(table: dict) -> Ranker:
    calibration = table.get("calibration", {})
    if isinstance(calibration, list):  # [a, b]: a score-only calibration
        calibration = {"final": calibration[0], "bias": calibration[1]}
    return Ranker(stage_from(table["prior"]), stage_from(table["final"]), {k: float(v) for k, v in calibration.items()},
                  str(table.get("calibrated_on", "score")), float(table.get("threshold", 0.0)),
                  dict(table.get("provenance", {})))


@lru_cache(maxsize=4)
def load(path: Path = WEIGHTS_FILE) -> Ranker:
    """The shipped ranker, or another weights file (read once per process); a file that cannot be
    read as one is a one-line error naming it."""
    return read_weights(Path(path), "an answer ranker weights file", from_dict)
