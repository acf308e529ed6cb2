"""The one set of fake models for tests of control flow (which calls happen, what the output
holds) without loading a model. Tests that need real behaviour use the real models (marker
`models`).

The fakes recognise prompts by the constants the prompt modules export (longqa/ask/prompts.py,
grounded.NO_ANSWER),
never by copied wording, so a reworded prompt cannot silently change what a fake answers.
"""

from __future__ import annotations

import hashlib
import json
import re
import time

import numpy as np

from longqa import tokens
from longqa.ask import prompts
from longqa.ask.search import router
from longqa.structure import titles
from longqa.structure.markup import Part, render
from longqa.ask.answer.grounded import NO_ANSWER
from longqa.models.base import KEEPS_PREFIX

# The bag-of-words fake's cosines run lower than all-MiniLM-L6-v2's, for which the default
# "nothing relevant" cosine threshold (0.42) is calibrated; tests with the fake use this one.
FAKE_COSINE_MIN = 0.3


class FakeEmbedder:
    """Bag of words hashed into `dim` dimensions, L2-normalised: texts sharing words are close,
    others are not. Words are cut to six letters, a crude stem, so "reactors" and "reactor" meet.
    Its cosines run lower than the real embedder's: tests that let the "nothing relevant" check
    read them pass FAKE_COSINE_MIN. `calls` counts embed() calls."""

    name = "fake-bow-256"
    dim = 256

    def __init__(self, name: str | None = None, dim: int | None = None):
        self.name, self.dim, self.calls = name or self.name, dim or self.dim, 0

    def embed(self, texts: list[str]) -> np.ndarray:
        self.calls += 1
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, text in enumerate(texts):
            for word in re.findall(r"[a-z0-9]+", text.lower()):
                out[row, int(hashlib.md5(word[:6].encode()).hexdigest(), 16) % self.dim] += 1.0
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
    capabilities: frozenset[str] = frozenset()  # like a server: label probabilities only

    def __init__(self, choose=None, next_queries: list[str] | None = None, splits: list[str] | None = None,
                 route=None, reply=None):
        self.choose = choose or (lambda prompt, labels: None)
        self.reply = reply  # reply(prompt, grammar) -> the answer text, instead of the default one
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
        if grammar and prompts.NEXT_QUERY in grammar:
            query = self.next_queries.pop(0) if self.next_queries else "What is the question again?"
            text = f" The context names something.\n{prompts.NEXT_QUERY} {query}"
        elif grammar and router.REFUSE_MOVE in grammar:  # router.py's one-move grammar
            text = self.route(prompt, grammar)
        elif grammar and prompts.SECOND_SUB_QUESTION in grammar:
            first, second = (self.splits + ["part one?", "part two?"])[:2]
            text = f" {first}\n{prompts.SECOND_SUB_QUESTION} {second}"
        elif self.reply is not None:
            text = self.reply(prompt, grammar)
        else:
            text = " " + self._answer(prompt)
        for piece in re.findall(r"\s*\S+", text):
            yield piece

    @staticmethod
    def _answer(prompt: str) -> str:
        passages = prompt.rsplit(prompts.PASSAGES_HEAD, 1)[-1]  # the real passages follow the example
        match = re.search(r"(?:^|\n)\[1\][^\n]*\n([^\n]+)", passages)
        if not match:
            return NO_ANSWER
        sentence = re.split(r"(?<=[.!?])\s", match.group(1).strip())[0]
        return f"{sentence} [1]"


class HookedEmbedder(FakeEmbedder):
    """The fake embedder that runs `hook()` once, just before its `at`-th embed() call: a test lets
    another process change the store at that moment of a batch (a removal, a re-ingest)."""

    def __init__(self, hook, at: int = 1, **options):
        super().__init__(**options)
        self.hook, self.at = hook, at

    def embed(self, texts: list[str]) -> np.ndarray:
        if self.calls + 1 == self.at:
            self.hook()
        return super().embed(texts)


class PausingGenerator(FakeGenerator):
    """The scripted generator that, at its first call, creates the file `ready` and waits (a
    minute at most) until the file `go` exists: a test holds an ask there, after its retrieval
    and before its context is built, while another process changes the store."""

    def __init__(self, ready, go, **options):
        super().__init__(**options)
        self.ready, self.go, self.paused = ready, go, False

    def _pause(self) -> None:
        if self.paused:
            return
        self.paused = True
        self.ready.touch()
        deadline = time.monotonic() + 60
        while not self.go.exists() and time.monotonic() < deadline:
            time.sleep(0.02)

    def label_probs(self, prompt: str, labels: list[str]) -> dict[str, float]:
        self._pause()
        return super().label_probs(prompt, labels)

    def stream(self, prompt, **options):
        self._pause()
        yield from super().stream(prompt, **options)


class KeepingGenerator(FakeGenerator):
    """The scripted generator that states it keeps prompt heads (as the local backend does) and
    records each head it is asked to keep."""

    capabilities = frozenset({KEEPS_PREFIX})

    def __init__(self, **options):
        super().__init__(**options)
        self.kept: list[str] = []

    def keep_prefix(self, text: str) -> None:
        self.kept.append(text)


# -- structuring (tests/structure/test_llm.py) -------------------------------------------------------------
class TopicEmbedder:
    """Vectors that point one way per topic (by keyword), so topic shifts are clear-cut."""

    name, dim = "fake-topic-embedder", 3
    KEYS = (("bee", "hive", "honey"), ("volcan", "magma", "eruption", "lava"), ("rail", "train", "locomotive"))

    def __init__(self):
        self.calls = 0

    def embed(self, texts: list[str]) -> np.ndarray:
        self.calls += 1
        rows = [[sum(t.lower().count(k) for k in keys) + 0.1 for keys in self.KEYS] for t in texts]
        matrix = np.asarray(rows, dtype=np.float32)
        return matrix / np.linalg.norm(matrix, axis=1, keepdims=True)


class OutlineGenerator:
    """Titles name the passage's first word; summaries name the title; with a grammar it writes a
    well-formed outline with a new section every `every` paragraphs (read off the grammar)."""

    name, n_ctx = "fake-generator", 8192
    capabilities: frozenset[str] = frozenset()

    def __init__(self, every: int = 3, garbage: str | None = None, drop_one: bool = False, part: str = "Part"):
        self.every, self.garbage, self.drop_one, self.part = every, garbage, drop_one, part
        self.calls = 0
        self.prompts: list[str] = []

    def count_tokens(self, text: str) -> int:
        return len(text.split())

    def complete(self, prompt, *, max_tokens=256, stop=None, grammar=None, temperature=0.0) -> str:
        self.calls += 1
        self.prompts.append(prompt)
        if self.garbage is not None:
            return self.garbage
        if grammar is not None:
            anchors = [json.loads(m) for m in re.findall(r'^s\d+ ::= ("(?:\\.|[^"\\])*")', grammar, re.M)]
            if self.drop_one:
                anchors.pop(1)
            name = lambda i: f"Part {i // self.every + 1}" if self.part == "Part" else self.part  # noqa: E731
            parts = [Part(1, name(i), anchors[i : i + self.every])
                     for i in range(0, len(anchors), self.every)]
            return render(parts)
        passage = prompt.rsplit(titles.PASSAGE_LABEL, 1)[-1] if prompt.endswith(titles.TITLE_LABEL) else prompt
        if prompt.endswith(titles.SUMMARY_CUE):
            return " the section " + prompt.split("\n")[0] + " in brief"
        return " About " + passage.split()[0].strip(",.") + "\nignored"

    def stream(self, prompt, **options):
        yield self.complete(prompt, **options)

    def label_probs(self, prompt: str, labels: list[str]) -> dict[str, float]:
        self.calls += 1
        return {label: 1.0 / len(labels) for label in labels}


class FakeReader(FakeGenerator):
    """The scripted generator as a reader profile (an instruction-tuned model, models/profiles.py):
    its chat prompts are the messages joined, and its reply to the reader's prompt is `said` (or
    `said(prompt)`); `certainty` is its probability of whatever it said; label choices are made
    by `choose` as for the FakeGenerator (uniform when it favours none)."""

    def __init__(self, said="unknown", certainty: float = 0.9, **options):
        from longqa.models.profiles import QWEN_05B

        super().__init__(reply=lambda prompt, grammar: said(prompt) if callable(said) else said, **options)
        self.profile, self.name, self.certainty = QWEN_05B, QWEN_05B.stem, certainty

    def chat_prompt(self, messages) -> str:
        return "".join(f"<{m.role}>\n{m.content}\n" for m in messages) + "<assistant>\n"

    def chat_head(self, system: str) -> str:
        return f"<system>\n{system}\n"

    def label_probs(self, prompt: str, labels: list[str]) -> dict[str, float]:
        if len(labels) == 1:  # its own reply, scored (reader.own_probability)
            self.calls.append(("label_probs", prompt))
            return {labels[0]: self.certainty}
        return super().label_probs(prompt, labels)
