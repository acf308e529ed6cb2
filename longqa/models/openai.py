"""OpenAI-compatible server backend (`--llm-url`): llama-server, vLLM, and the like.

- complete/stream: POST /completions (stream as server-sent events); `grammar` is sent as the
  GBNF `grammar` field, which llama-server understands.
- label_probs: one /completions call with max_tokens=1 and top logprobs; each label is scored
  by the most specific returned token that starts it. When labels share that token, or the
  server returns no usable logprobs, the documented fallback is a grammar-constrained choice
  among the labels (probability 1 for the chosen label).
- embeddings: POST /embeddings (`--embed-url`); a generation server is never asked for them, so
  the vectors a store was built with stay comparable.

Answers are checked for shape: a server that returns JSON of another form gives a one-line error
naming it, never a traceback.
"""

from __future__ import annotations

import contextlib
import math
from typing import Iterator

import numpy as np

from longqa import tokens as cl100k
from longqa.errors import ModelError
from longqa.models.grammar import choice
from longqa.models.http import HttpStatusError, JsonClient
from longqa.models.prompt_fit import check_fits, l2_normalise, renormalise, unique_labels

DEFAULT_SERVER_CTX = 4096  # when the server does not say
TOP_LOGPROBS = 20
EMBED_BATCH = 64


@contextlib.contextmanager
def answer_shape(client: JsonClient, path: str):
    """Reading an answer: any lookup that does not fit its JSON becomes one line naming the server."""
    try:
        yield
    except (KeyError, IndexError, TypeError, AttributeError, ValueError) as exc:
        raise ModelError(f"LLM server at {client.base}: unexpected answer from {path} "
                         f"({type(exc).__name__}: {' '.join(str(exc).split())[:80]})") from None


def server_models(client: JsonClient) -> list[dict]:
    """GET /models: the served models (fails with 'cannot reach' when the server is down)."""
    try:
        listing = client.get("models")
    except HttpStatusError:
        return []
    data = listing.get("data") if isinstance(listing, dict) else None
    return [m for m in data or [] if isinstance(m, dict) and m.get("id")]


def context_length(entry: dict) -> int | None:
    """The context window a /models entry advertises (vLLM: max_model_len; llama-server: meta)."""
    meta = entry.get("meta")
    for value in (entry.get("max_model_len"), meta.get("n_ctx_train") if isinstance(meta, dict) else None):
        if isinstance(value, int) and value > 0:
            return value
    return None


class OpenAIGenerator:
    # A server keeps no prompt state between calls, scores no whole options and shows no attention.
    capabilities: frozenset[str] = frozenset()

    def __init__(self, url: str, *, model: str | None = None, n_ctx: int | None = None,
                 client: JsonClient | None = None):
        self.client = client or JsonClient(url)
        models = server_models(self.client)  # also proves the server is up
        entry = next((m for m in models if m["id"] == model), models[0] if models else {})
        self.model = model or entry.get("id") or "default"
        self.n_ctx = n_ctx or context_length(entry) or DEFAULT_SERVER_CTX
        self.name = f"server:{self.model}"
        self.url = self.client.base
        self._tokenizers = ["tokenize", "extras/tokenize/count"]  # tried in turn; dropped when absent

    def count_tokens(self, text: str) -> int:
        """The server's own count where offered (llama-server's /tokenize, llama-cpp-python's
        /extras/tokenize/count, which includes the BOS token); else a cl100k estimate."""
        while self._tokenizers:
            path = self._tokenizers[0]
            try:
                if path == "tokenize":
                    answer = self.client.post(path, {"content": text, "add_special": False},
                                              absolute=self.client.root_url(path))
                    return len(answer["tokens"])
                answer = self.client.post(path, {"input": text}, absolute=self.client.root_url(path))
                return int(answer["count"])
            except (HttpStatusError, KeyError, TypeError, ValueError):
                self._tokenizers.pop(0)
        return cl100k.count(text)

    def _payload(self, prompt, max_tokens, stop, grammar, temperature, **extra) -> dict:
        check_fits(self.name, self.count_tokens(prompt) + 1, max_tokens, self.n_ctx)
        payload = {"model": self.model, "prompt": prompt, "max_tokens": max_tokens,
                   "temperature": temperature, **extra}
        if stop:
            payload["stop"] = stop
        if grammar:
            payload["grammar"] = grammar
        return payload

    def complete(self, prompt: str, *, max_tokens: int = 256, stop: list[str] | None = None,
                 grammar: str | None = None, temperature: float = 0.0) -> str:
        answer = self.client.post("completions", self._payload(prompt, max_tokens, stop, grammar, temperature))
        return _text(_choice(answer, self.client.base), self.client)

    def stream(self, prompt: str, *, max_tokens: int = 256, stop: list[str] | None = None,
               grammar: str | None = None, temperature: float = 0.0) -> Iterator[str]:
        payload = self._payload(prompt, max_tokens, stop, grammar, temperature, stream=True)
        for event in self.client.stream("completions", payload):
            choices = event.get("choices") or []
            text = _text(choices[0], self.client) if choices else ""
            if text:
                yield text

    def label_probs(self, prompt: str, labels: list[str]) -> dict[str, float]:
        labels = unique_labels(labels)
        answer = self.client.post("completions", self._payload(
            prompt, 1, None, None, 0.0, logprobs=TOP_LOGPROBS, top_logprobs=TOP_LOGPROBS))
        with answer_shape(self.client, "completions"):
            top = top_logprobs(_choice(answer, self.client.base))
        matched = [best_token(label, top) for label in labels]
        tokens = [token for token in matched if token is not None]
        if top and tokens and len(set(tokens)) == len(tokens):
            return renormalise(labels, [top[t] if t is not None else -math.inf for t in matched])
        return self._choose(prompt, labels)

    def _choose(self, prompt: str, labels: list[str]) -> dict[str, float]:
        """Fallback: let the server pick one label under a GBNF choice grammar."""
        longest = max(self.count_tokens(label) for label in labels) + 2
        text = self.complete(prompt, max_tokens=longest, grammar=choice(labels))
        if text not in labels:
            raise ModelError(
                f"LLM server at {self.client.base} returned neither logprobs nor a grammar-"
                f"constrained answer (got {text[:40]!r}); use llama-server for --llm-url"
            )
        return {label: float(label == text) for label in labels}


def _text(choice_: object, client: JsonClient) -> str:
    text = choice_.get("text") if isinstance(choice_, dict) else None
    if text is None:
        return ""
    if not isinstance(text, str):
        raise ModelError(f"LLM server at {client.base}: completion text is not a string")
    return text


def _choice(answer: dict, base: str) -> dict:
    choices = answer.get("choices") if isinstance(answer, dict) else None
    if not choices or not isinstance(choices[0], dict):
        raise ModelError(f"LLM server at {base}: completion answer without choices")
    return choices[0]


def top_logprobs(choice_: dict) -> dict[str, float]:
    """Next-token alternatives from either logprobs format: legacy OpenAI
    (`top_logprobs: [{token: lp}]`) or the chat-style one (`content: [{top_logprobs: [...]}]`)."""
    logprobs = choice_.get("logprobs") or {}
    legacy = logprobs.get("top_logprobs")
    if isinstance(legacy, list) and legacy and isinstance(legacy[0], dict):
        return {str(k): float(v) for k, v in legacy[0].items()}
    content = logprobs.get("content")
    if isinstance(content, list) and content:
        alternatives = content[0].get("top_logprobs") or []
        return {str(a["token"]): float(a["logprob"]) for a in alternatives if "token" in a and "logprob" in a}
    return {}


def best_token(label: str, top: dict[str, float]) -> str | None:
    """The longest returned token that the label starts with (its most likely first token)."""
    candidates = [token for token in top if token and label.startswith(token)]
    return max(candidates, key=len) if candidates else None


class OpenAIEmbedder:
    def __init__(self, url: str, *, model: str | None = None, client: JsonClient | None = None):
        self.client = client or JsonClient(url)
        models = server_models(self.client)
        self.model = model or (models[0]["id"] if models else "default")
        self.name = f"server:{self.model}"
        self.url = self.client.base
        self.dim = int(self._request(["dimension probe"]).shape[1])  # raises if not offered

    def embed(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        parts = [self._request(texts[i:i + EMBED_BATCH]) for i in range(0, len(texts), EMBED_BATCH)]
        return l2_normalise(np.concatenate(parts))

    def _request(self, texts: list[str]) -> np.ndarray:
        answer = self.client.post("embeddings", {"model": self.model, "input": texts})
        data = answer.get("data") if isinstance(answer, dict) else None
        if not isinstance(data, list) or len(data) != len(texts):
            raise ModelError(f"LLM server at {self.client.base}: embeddings answer has the wrong shape")
        with answer_shape(self.client, "embeddings"):
            rows = sorted(data, key=lambda item: item.get("index", 0))
            vectors = np.asarray([row["embedding"] for row in rows], dtype=np.float32)
        if vectors.ndim != 2 or not vectors.shape[1] or not np.isfinite(vectors).all():
            raise ModelError(f"LLM server at {self.client.base}: embeddings answer is not one finite vector per text")
        if getattr(self, "dim", vectors.shape[1]) != vectors.shape[1]:
            raise ModelError(f"LLM server at {self.client.base}: embeddings changed size "
                             f"({self.dim} then {vectors.shape[1]})")
        return vectors
