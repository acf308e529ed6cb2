"""The one counting wrapper: model calls, generated tokens, embedded texts and seconds.

The evaluation gives every system of a run the same wrapped generator and embedder (one `Usage`),
so the pipeline's internal calls are counted like the harness's answer call; the model
structurer reports the calls and tokens each document cost.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Iterator

import numpy as np

from longqa.models.base import SCORES_OPTIONS, supports


@dataclass
class Usage:
    generator_calls: int = 0
    generated_tokens: int = 0  # tokens of text the generator wrote (complete, stream)
    scored_tokens: int = 0  # next-token distributions read: one per label_probs, one per option
    generator_seconds: float = 0.0
    embed_calls: int = 0
    embedded_texts: int = 0
    embed_seconds: float = 0.0

    def since(self, earlier: "Usage") -> "Usage":
        return Usage(**{k: getattr(self, k) - getattr(earlier, k) for k in self.__dataclass_fields__})

    def copy(self) -> "Usage":
        return Usage(**self.__dict__)


class CountingGenerator:
    """Delegates to a Generator and records each call (a call that raised counts too) in `usage`."""

    def __init__(self, inner, usage: Usage | None = None):
        self.inner = inner
        self.usage = usage if usage is not None else Usage()
        self.name = inner.name
        self.n_ctx = inner.n_ctx

    @property
    def capabilities(self) -> frozenset[str]:
        return self.inner.capabilities

    # The structurer's figures, read from the usage.
    @property
    def calls(self) -> int:
        return self.usage.generator_calls

    @property
    def generated_tokens(self) -> int:
        return self.usage.generated_tokens

    @property
    def seconds(self) -> float:
        return self.usage.generator_seconds

    def count_tokens(self, text: str) -> int:
        return self.inner.count_tokens(text)

    def _spent(self, started: float, generated: int = 0, scored: int = 0) -> None:
        self.usage.generator_calls += 1
        self.usage.generated_tokens += generated
        self.usage.scored_tokens += scored
        self.usage.generator_seconds += time.perf_counter() - started

    def complete(self, prompt: str, **kwargs) -> str:
        started = time.perf_counter()
        text = ""
        try:
            text = self.inner.complete(prompt, **kwargs)
        finally:
            self._spent(started, self.inner.count_tokens(text) if text else 0)
        return text

    def stream(self, prompt: str, **kwargs) -> Iterator[str]:
        started = time.perf_counter()
        pieces: list[str] = []
        try:
            for piece in self.inner.stream(prompt, **kwargs):
                pieces.append(piece)
                yield piece
        finally:
            text = "".join(pieces)
            self._spent(started, self.inner.count_tokens(text) if text else 0)

    def label_probs(self, prompt: str, labels: list[str]) -> dict[str, float]:
        started = time.perf_counter()
        try:
            return self.inner.label_probs(prompt, labels)
        finally:
            self._spent(started, scored=1)  # one next-token distribution read

    def _option_logprobs(self, prompt: str, options: list[str], **kwargs) -> list[float]:
        started = time.perf_counter()
        try:
            return self.inner.option_logprobs(prompt, options, **kwargs)
        finally:
            self._spent(started, scored=len(options))

    def __getattr__(self, name):  # anything else a backend offers (close, metadata, ...)
        if name == "option_logprobs" and supports(self.inner, SCORES_OPTIONS):
            return self._option_logprobs  # counted; backends without it make the caller fall back
        return getattr(self.inner, name)


class CountingEmbedder:
    """Delegates to an Embedder and records each call and the number of texts."""

    def __init__(self, inner, usage: Usage | None = None):
        self.inner = inner
        self.usage = usage if usage is not None else Usage()
        self.name = inner.name
        self.dim = inner.dim

    def embed(self, texts: list[str]) -> np.ndarray:
        started = time.perf_counter()
        try:
            return self.inner.embed(texts)
        finally:
            self.usage.embed_calls += 1
            self.usage.embedded_texts += len(texts)
            self.usage.embed_seconds += time.perf_counter() - started

    def __getattr__(self, name):
        return getattr(self.inner, name)
