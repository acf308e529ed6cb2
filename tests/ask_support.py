"""Fakes and store builders for the `ask` tests.

The fakes implement the Generator and Embedder protocols deterministically so tests can check
control flow (which calls happen, what the output contains) without loading a model. Stores are
real SQLite files filled by the real ingest path from generated markdown and PDF documents.
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

import numpy as np

from longqa import tokens
from longqa.ingest import Ingestor
from longqa.store import open_db


# The bag-of-words fake's cosines run lower than all-MiniLM-L6-v2's, for which the default
# "nothing relevant" cosine threshold (0.42) is calibrated; tests with the fake use this one.
FAKE_COSINE_MIN = 0.3


def make_pipeline(db, generator=None, **options):
    """A Pipeline over `db` with the fake embedder and its relevance threshold."""
    from longqa.ask import Pipeline

    options.setdefault("cosine_min", FAKE_COSINE_MIN)
    return Pipeline(db, generator if generator is not None else FakeGenerator(), FakeEmbedder(), **options)


class FakeEmbedder:
    """Bag of words hashed into 256 dimensions: texts sharing words are close, others are not."""

    name = "fake-bow-256"
    dim = 256

    def embed(self, texts: list[str]) -> np.ndarray:
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, text in enumerate(texts):
            for word in re.findall(r"[a-z0-9]+", text.lower()):
                word = word[:6]  # a crude stem: "reactors" and "reactor" meet
                out[row, int(hashlib.md5(word.encode()).hexdigest(), 16) % self.dim] += 1.0
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        return out / np.maximum(norms, 1e-12)


class FakeGenerator:
    """A scripted generator. It records every call; label probabilities come from `choose`.

    - label_probs: `choose(prompt, labels)` may return a label to favour (p = 0.8), else uniform.
    - complete/stream with a grammar: canned lines in the grammar's shape (next query, split);
      a router move is `route(prompt, grammar)` (default: a reply that is no move).
    - answers: "<first sentence of passage 1> [1]" streamed word by word.
    """

    name = "fake-generator"
    n_ctx = 8192

    def __init__(self, choose=None, next_queries: list[str] | None = None, splits: list[str] | None = None,
                 route=None):
        self.choose = choose or (lambda prompt, labels: None)
        self.route = route or (lambda prompt, grammar: " (no move)")  # the router's reply
        self.next_queries = list(next_queries or [])
        self.splits = list(splits or [])
        self.calls: list[tuple[str, str]] = []  # (kind, prompt)

    def count_tokens(self, text: str) -> int:
        return tokens.count(text)

    def label_probs(self, prompt: str, labels: list[str]) -> dict[str, float]:
        self.calls.append(("label_probs", prompt))
        favoured = self.choose(prompt, labels)
        if favoured is None:
            return {label: 1.0 / len(labels) for label in labels}
        rest = (1.0 - 0.8) / max(len(labels) - 1, 1)
        return {label: 0.8 if label == favoured else rest for label in labels}

    def complete(self, prompt, *, max_tokens=256, stop=None, grammar=None, temperature=0.0) -> str:
        return "".join(self.stream(prompt, max_tokens=max_tokens, stop=stop, grammar=grammar,
                                   temperature=temperature))

    def stream(self, prompt, *, max_tokens=256, stop=None, grammar=None, temperature=0.0):
        self.calls.append(("generate", prompt))
        if grammar and "Next query" in grammar:
            query = self.next_queries.pop(0) if self.next_queries else "What is the question again?"
            text = f" The context names something.\nNext query: {query}"
        elif grammar and "REFUSE" in grammar:  # router.py's one-move grammar
            text = self.route(prompt, grammar)
        elif grammar and "Sub-question 2" in grammar:
            first, second = (self.splits + ["part one?", "part two?"])[:2]
            text = f" {first}\nSub-question 2: {second}"
        else:
            text = " " + self._answer(prompt)
        for piece in re.findall(r"\s*\S+", text):
            yield piece

    @staticmethod
    def _answer(prompt: str) -> str:
        passages = prompt.rsplit("Passages:\n", 1)[-1]  # the real passages come after the example
        match = re.search(r"(?:^|\n)\[1\][^\n]*\n([^\n]+)", passages)
        if not match:
            return "The documents do not say."
        sentence = re.split(r"(?<=[.!?])\s", match.group(1).strip())[0]
        return f"{sentence} [1]"


def build_store(db_path: Path, documents: dict[str, str], tmp_path: Path, embedder=None):
    """A real store: each (file name -> markdown text) written to disk and ingested."""
    db = open_db(db_path)
    ingestor = Ingestor(db=db, embedder=embedder or FakeEmbedder())
    for name, text in documents.items():
        path = tmp_path / name
        path.write_text(text, encoding="utf-8")
        result = ingestor.ingest(path)
        assert result.status in ("added", "updated"), result.error
    return db


def reactor_handbook() -> str:
    """A generated handbook: sections, subsections, numbers; enough text for several leaves."""
    parts = ["# Harbor Point Reactor Handbook\n"]
    topics = [
        ("Cooling System", "coolant", "The primary coolant loop moves 1,200 litres per minute of borated water."),
        ("Fuel Handling", "fuel", "Fuel assemblies are replaced every 18 months during a planned outage."),
        ("Emergency Procedures", "emergency", "The emergency diesel generators start within 10 seconds of a grid loss."),
        ("Staff Training", "training", "Every operator completes 120 hours of simulator training each year."),
    ]
    for title, word, fact in topics:
        parts.append(f"## {title}\n")
        for sub in ("Overview", "Details"):
            parts.append(f"### {title} {sub}\n")
            for i in range(3):
                parts.append(
                    f"This paragraph {i} of the {word} {sub.lower()} describes routine {word} work at the "
                    f"plant in plain words. " * 3 + (fact if sub == "Details" and i == 1 else "") + "\n"
                )
    return "\n".join(parts)
