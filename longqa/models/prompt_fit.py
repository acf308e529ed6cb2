"""The one rule every backend enforces: a prompt is never cut to fit the context window."""

from __future__ import annotations

import numpy as np

from longqa.errors import ModelError
from longqa.probabilities import softmax


class PromptTooLong(ModelError):
    """Prompt tokens plus the tokens to generate do not fit the generator's context window.

    Callers fit their prompts (they know what can be dropped); the backend only refuses.
    """

    def __init__(self, name: str, prompt_tokens: int, max_tokens: int, n_ctx: int):
        super().__init__(
            f"prompt of {prompt_tokens} tokens plus {max_tokens} to generate exceeds the "
            f"{n_ctx}-token context window of {name}"
        )
        self.prompt_tokens, self.max_tokens, self.n_ctx = prompt_tokens, max_tokens, n_ctx


def check_fits(name: str, prompt_tokens: int, max_tokens: int, n_ctx: int) -> None:
    if max_tokens < 1:
        raise ValueError("max_tokens must be at least 1")
    if prompt_tokens + max_tokens > n_ctx:
        raise PromptTooLong(name, prompt_tokens, max_tokens, n_ctx)


def unique_labels(labels: list[str]) -> list[str]:
    """The labels in order, duplicates dropped (a duplicate would split its probability)."""
    if not labels:
        raise ValueError("label_probs needs at least one label")
    if any(not label for label in labels):
        raise ValueError("labels must be non-empty strings")
    return list(dict.fromkeys(labels))


def renormalise(labels: list[str], logprobs: list[float]) -> dict[str, float]:
    """Softmax over the labels' log-probabilities: a distribution over the labels only."""
    return dict(zip(labels, softmax([float(v) for v in logprobs])))


def l2_normalise(matrix: np.ndarray) -> np.ndarray:
    matrix = np.asarray(matrix, dtype=np.float32)
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    return matrix / np.maximum(norms, 1e-12)
