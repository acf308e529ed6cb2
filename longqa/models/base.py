"""The two interfaces the rest of longqa uses. Backends implement them; tests may fake them.

A generator is a chooser (gemma-3-270m, a base model: completion-shaped prompts) or a reader (an
instruction-tuned model through its chat template, the default qwen2.5-coder-1.5b; see
models/profiles.py). Every decision is read from a grammar-constrained choice or from label-token
probabilities, never parsed out of free text.
"""

from __future__ import annotations

from typing import Iterator, Protocol, runtime_checkable

import numpy as np


# What a generator may offer beyond the protocol's methods. Each generator states the ones it has
# in `capabilities`; callers ask `supports(generator, ...)` instead of probing for a method.
KEEPS_PREFIX = "keeps_prefix"  # keep_prefix(text): a prompt head's state is kept between calls
SCORES_OPTIONS = "scores_options"  # option_logprobs(prompt, options, max_tokens=): whole options scored
READS_ATTENTION = "reads_attention"  # `llama` (the open llama.cpp model) and `n_ctx_train`: attention is readable
CAPABILITIES = frozenset({KEEPS_PREFIX, SCORES_OPTIONS, READS_ATTENTION})


def supports(generator, capability: str) -> bool:
    """Whether `generator` (None: no generator) states `capability`, one of CAPABILITIES."""
    if capability not in CAPABILITIES:
        raise ValueError(f"unknown generator capability {capability!r}")
    return generator is not None and capability in generator.capabilities


@runtime_checkable
class Generator(Protocol):
    name: str  # identity used in cache keys and reports (file name + sha, or server model id)
    n_ctx: int  # context window in the generator's own tokens
    capabilities: frozenset[str]  # the optional CAPABILITIES it offers (often none)

    def count_tokens(self, text: str) -> int:
        """Tokens `text` takes in this model's own vocabulary."""

    def complete(
        self,
        prompt: str,
        *,
        max_tokens: int = 256,
        stop: list[str] | None = None,
        grammar: str | None = None,
        temperature: float = 0.0,
    ) -> str:
        """Continue `prompt`; `grammar` is GBNF that the output must match."""

    def stream(
        self,
        prompt: str,
        *,
        max_tokens: int = 256,
        stop: list[str] | None = None,
        grammar: str | None = None,
        temperature: float = 0.0,
    ) -> Iterator[str]:
        """Like `complete`, yielding text pieces as they are generated."""

    def label_probs(self, prompt: str, labels: list[str]) -> dict[str, float]:
        """Probability of each label as the continuation of `prompt`, renormalised over `labels`
        (sums to 1). Computed from the model's next-token distribution (first token of each
        label, or the whole label's log-probability where labels share a first token)."""


@runtime_checkable
class Embedder(Protocol):
    name: str  # identity stored with every vector; vectors of different names never mix
    dim: int

    def embed(self, texts: list[str]) -> np.ndarray:
        """(len(texts), dim) float32 rows, L2-normalised."""
