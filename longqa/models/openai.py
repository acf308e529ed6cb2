"""OpenAI-compatible server backend (`--llm-url`): llama-server, vLLM, and the like.

- complete/stream: POST /completions (stream as server-sent events); `grammar` is sent as the
  GBNF `grammar` field, which llama-server understands.
- label_probs: one /completions call with max_tokens=1 and top logprobs; each label is scored
  by the most specific returned token that starts it. When labels share that token, or the
  server returns no usable logprobs, the documented fallback is a grammar-constrained choice
  among the labels (probability 1 for the chosen label).
- option_logprobs (SCORES_OPTIONS): the mean log-probability of each option's first tokens after
  the prompt, as in process, by the first of these a probe on the first call finds usable (once
  per server, logged at debug level):
  1. echo: POST /completions with each prompt + option, `echo` and `logprobs`, reading the
     log-probabilities of the echoed option tokens (found by `text_offset`), several options a
     request where the server takes a list of prompts. Used where a two-token probe echoes within
     MAX_ECHO_SECONDS_PER_TOKEN (vLLM); llama-server refuses echo, and llama-cpp-python's server
     sorts its whole vocabulary for every echoed token, the prompt's included.
  2. forced decoding: per option, one streamed /completions with the same prompt, a grammar of
     the option's token ids (the server's /tokenize or /extras/tokenize, split as in process),
     temperature 0 and `logprobs`; the reported log-probabilities of the generated tokens are the
     model's own, before the grammar (llama-server by default; llama-cpp-python's from the raw
     logits). The server keeps the prompt's KV cells between requests, so only option tokens cost.
     One request at a time unless $LONGQA_LLM_PARALLEL says more (up to the slots /props names):
     llama-server keeps a prompt's cells per slot, so each further slot reads the prompt again.
     The probe measures the server's time a request and a token; a call forces its options where
     they would take at most FORCED_SHARE of the question deadline, else that call falls back to 3.
  3. otherwise the capability is dropped, and options are scored by label_probs (first-token
     probabilities), which can rank them differently.
- chat: a served file that is a chat profile's (models/profiles.py) gets the reader's prompts at
  POST /chat/completions, rendered by the server in the model's own template; the reply's token
  log-probabilities are its own probability (a chat turn's other continuations cannot be scored).
- embeddings: POST /embeddings (`--embed-url`); a generation server is never asked for them, so
  the vectors a store was built with stay comparable.

Answers are checked for shape: a server that returns JSON of another form gives a one-line error
naming it, never a traceback.
"""

from __future__ import annotations

import contextlib
import logging
import math
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Iterator

import numpy as np

from longqa import environment
from longqa import tokens as cl100k
from longqa.errors import ModelError
from longqa.models import profiles
from longqa.models.base import SCORES_OPTIONS
from longqa.models.chat import COMMON_MARKERS, ChatPrompt, defuse, markers_in
from longqa.models.grammar import choice, token_sequence
from longqa.models.http import HttpStatusError, JsonClient
from longqa.models.prompt_fit import check_fits, l2_normalise, renormalise, unique_labels

DEFAULT_SERVER_CTX = 4096  # when the server does not say
TOP_LOGPROBS = 20
EMBED_BATCH = 64
ECHO_BATCH = 8  # options per /completions request where the server takes a list of prompts
ECHO_PROBE = ("Page", " one")  # the support check: a prompt and an option of one token each
# The probe's time per token it names (2 echoed, 1 generated) above which echo is not used:
# llama-cpp-python's server sorts its whole vocabulary for every echoed token (0.3 s and more a
# token on a laptop core, minutes for one option after a 500-token answer prompt), while a server
# that computes them on its device (vLLM) answers the probe in milliseconds plus the round trip.
MAX_ECHO_SECONDS_PER_TOKEN = 0.05
PROBE_TOKENS = 3
FORCED_PROBE = ("The report has", " two pages")  # the forced-decoding check: a prompt and an option
# A call's options are forced where, at the probe's time a request and a token, they take at most
# this share of the question deadline ($LONGQA_LLM_TIMEOUT), the rest being the question's other
# calls. Measured on a shared 2-core machine: llama-server about 30 ms a request and 80 ms a token
# (its grammar is checked against gemma's 262k tokens at each step), so the answer stage's
# shortlist of 12 candidates (50-70 tokens) takes 4-6 s, inside a quarter of the default 30 s;
# llama-cpp-python's server 0.8-1.2 s a token (it sorts its vocabulary in Python for each token
# it reports), so it forces only under a deadline of some 400 s.
FORCED_SHARE = 0.25
LOG_FLOOR = math.log(1e-12)  # the score of an option the server would not generate
log = logging.getLogger(__name__)


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


def served_file(model_id: str) -> str | None:
    """The GGUF file a server names its model by, without its folder and suffix: llama-server and
    llama-cpp-python's server give the path they loaded as the id (`/srv/gemma-3-270m-q4_k_m.gguf`)
    unless told an alias. None for any other id."""
    base = model_id.replace("\\", "/").rsplit("/", 1)[-1]
    return base[: -len(".gguf")] if base.lower().endswith(".gguf") and len(base) > 5 else None


class OpenAIGenerator:
    # A server keeps no prompt state between calls and shows no attention. Whole options are
    # scored until the first option_logprobs call finds the server can neither echo them nor be
    # forced through them fast enough.
    capabilities: frozenset[str] = frozenset({SCORES_OPTIONS})

    def __init__(self, url: str, *, model: str | None = None, n_ctx: int | None = None,
                 client: JsonClient | None = None, max_echo_seconds: float | None = MAX_ECHO_SECONDS_PER_TOKEN,
                 max_forced_seconds: float | None = None):
        """`max_echo_seconds`: the slowest echo per token still used for option scoring (None: any).
        `max_forced_seconds`: the same for forced decoding (None: from the client's deadline)."""
        self._parallel = environment.llm_parallel()  # refused when bad before the server is asked
        self.client = client or JsonClient(url)
        models = server_models(self.client)  # also proves the server is up
        entry = next((m for m in models if m["id"] == model), models[0] if models else {})
        self.model = model or entry.get("id") or "default"
        self.n_ctx = n_ctx or context_length(entry) or DEFAULT_SERVER_CTX
        self.name = f"server:{self.model}"
        self.model_file = served_file(self.model)
        # The profile the served file is (models/profiles.py): a chat profile's reader prompts go
        # to /chat/completions, where the server applies the model's own template.
        self.profile = profiles.by_identity(self.model_file) if self.model_file else None
        self._said: dict[str, tuple[str, float]] = {}  # chat prompt -> (reply, its mean token logprob)
        self._markers: tuple[str, ...] | None = None  # control-token spellings, once known (_plain)
        self.url = self.client.base
        self._tokenizers = ["tokenize", "extras/tokenize/count"]  # tried in turn; dropped when absent
        self._id_tokenizers = ["tokenize", "extras/tokenize"]  # the same, for token ids
        self.capabilities = OpenAIGenerator.capabilities  # narrowed per server by the first probe
        self.max_echo_seconds = max_echo_seconds
        self.max_forced_seconds = max_forced_seconds
        self.scoring: str | None = None  # echo | forced | first-token, once probed
        self._echo_batch = ECHO_BATCH  # 1 once the server refuses a list of prompts
        self._slots = 1  # forced-decoding requests at once
        self._forced_seconds = 0.0  # the probe's time a forced token
        self._forced_overhead = 0.0  # and a forced request's time besides its tokens

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

    def _plain(self, text: str) -> str:
        """`text` as sent in a /completions prompt: llama.cpp's server parses control tokens in
        prompt text, so a document that spells `<|im_start|>` would open a real turn there. Each
        control marker is broken: the profile's, else those the server declares (/props: the
        chat template, BOS and EOS) and the common formats' (models/chat.py)."""
        if self._markers is None:
            self._markers = self.profile.control_markers if self.profile is not None else self._declared_markers()
        return defuse(text, self._markers)

    def _declared_markers(self) -> tuple[str, ...]:
        try:
            props = self.client.get("props", absolute=self.client.root_url("props"))
        except HttpStatusError:  # not llama-server: the common formats' markers alone
            props = {}
        declared = [props.get(key) for key in ("chat_template", "bos_token", "eos_token")]
        found = markers_in(*(text for text in declared if isinstance(text, str)))
        return tuple(dict.fromkeys(COMMON_MARKERS + found))

    def _payload(self, prompt, max_tokens, stop, grammar, temperature, **extra) -> dict:
        prompt = self._plain(prompt)
        check_fits(self.name, self.count_tokens(prompt) + 1, max_tokens, self.n_ctx)
        # No repeat penalty, as in process: llama-cpp-python's server applies 1.1 by default, over
        # the prompt's last 64 tokens too, which turns greedy decoding elsewhere.
        payload = {"model": self.model, "prompt": prompt, "max_tokens": max_tokens,
                   "temperature": temperature, "repeat_penalty": 1.0, **extra}
        if stop:
            payload["stop"] = stop
        if grammar:
            payload["grammar"] = grammar
        return payload

    def complete(self, prompt: str, *, max_tokens: int = 256, stop: list[str] | None = None,
                 grammar: str | None = None, temperature: float = 0.0) -> str:
        answer = self.client.post("completions", self._payload(prompt, max_tokens, stop, grammar, temperature))
        return _text(_choice(answer, self.client.base), self.client)

    # -- chat (a chat profile served) ----------------------------------------------------------
    def chat_prompt(self, messages) -> ChatPrompt:
        """Reader messages for /chat/completions (the server renders its model's template)."""
        if self.profile is None or not self.profile.chat:
            raise ModelError(f"{self.name}: not a chat model")
        return ChatPrompt(messages, self.profile.control_markers)

    def _chat(self, prompt: ChatPrompt, max_tokens: int, stop, temperature: float) -> Iterator[str]:
        """The reply streamed from /chat/completions; its tokens' log-probabilities are kept, so the
        reader's own probability of it needs no second request (servers cannot score a chat turn)."""
        check_fits(self.name, self.count_tokens(str(prompt)) + 1, max_tokens, self.n_ctx)
        payload = {"model": self.model, "messages": [{"role": m.role, "content": m.content} for m in prompt.messages],
                   "max_tokens": max_tokens, "temperature": temperature, "repeat_penalty": 1.0, "stream": True,
                   "logprobs": True}
        if stop:
            payload["stop"] = stop
        said, logprobs = [], []
        for event in self.client.stream("chat/completions", payload):
            choices = event.get("choices") or []
            if not choices:
                continue
            with answer_shape(self.client, "chat/completions"):
                delta = choices[0].get("delta") or {}
                text = delta.get("content") or ""
                if not isinstance(text, str):
                    raise ValueError("content is not text")
                for token in ((choices[0].get("logprobs") or {}).get("content") or []):
                    logprobs.append(float(token["logprob"]))
            if text:
                said.append(text)
                yield text
        reply = "".join(said)
        self._said[str(prompt)] = (reply, sum(logprobs) / len(logprobs) if logprobs else 0.0)

    def _chat_scores(self, prompt: ChatPrompt, options: list[str]) -> list[float]:
        """Log-probabilities of continuations of a chat turn: the reply the server gave is known
        (its mean token log-probability); any other continuation cannot be scored through
        /chat/completions and scores the same for all (0.0), so it does not decide."""
        reply, logprob = self._said.get(str(prompt), (None, 0.0))
        return [logprob if option.strip() == (reply or "").strip() else 0.0 for option in options]

    def stream(self, prompt: str, *, max_tokens: int = 256, stop: list[str] | None = None,
               grammar: str | None = None, temperature: float = 0.0) -> Iterator[str]:
        if isinstance(prompt, ChatPrompt):
            yield from self._chat(prompt, max_tokens, stop, temperature)
            return
        payload = self._payload(prompt, max_tokens, stop, grammar, temperature, stream=True)
        for event in self.client.stream("completions", payload):
            choices = event.get("choices") or []
            text = _text(choices[0], self.client) if choices else ""
            if text:
                yield text

    def label_probs(self, prompt: str, labels: list[str]) -> dict[str, float]:
        labels = unique_labels(labels)
        if isinstance(prompt, ChatPrompt):
            return renormalise(labels, self._chat_scores(prompt, labels))
        answer = self.client.post("completions", self._payload(
            prompt, 1, None, None, 0.0, logprobs=TOP_LOGPROBS, top_logprobs=TOP_LOGPROBS))
        with answer_shape(self.client, "completions"):
            top = top_logprobs(_choice(answer, self.client.base))
        matched = [best_token(label, top) for label in labels]
        tokens = [token for token in matched if token is not None]
        if top and tokens and len(set(tokens)) == len(tokens):
            return renormalise(labels, [top[t] if t is not None else -math.inf for t in matched])
        return self._choose(prompt, labels)

    def option_logprobs(self, prompt: str, options: list[str], *, max_tokens: int = 8) -> list[float]:
        if isinstance(prompt, ChatPrompt):
            return self._chat_scores(prompt, options)
        """Mean log-probability per token of each option's first `max_tokens` tokens after `prompt`,
        echoed or forced by the server; the fallback, once the server is found unable, is the log
        of label_probs (first-token probabilities renormalised over the options)."""
        if not options:
            return []
        # Broken here once, so that the token ids forced and the offsets echoed are those of what is sent.
        prompt, options = self._plain(prompt), [self._plain(option) for option in options]
        if self.scoring is None:
            self._choose_scoring()
        try:
            if self.scoring == "echo":
                check_fits(self.name, self.count_tokens(prompt + max(options, key=len)) + 1, 1, self.n_ctx)
                scores: list[float] = []
                for i in range(0, len(options), self._echo_batch):
                    scores += self._echoed(prompt, options[i:i + self._echo_batch], max_tokens)
                return scores
            if self.scoring == "forced":
                forced = self._forced_scores(prompt, options, max_tokens)
                if forced is not None:
                    return forced
        except _NoEcho as exc:
            self._drop_scoring(str(exc))
        probs = self.label_probs(prompt, options)
        return [math.log(max(probs.get(option, 0.0), 1e-12)) for option in options]

    def _choose_scoring(self) -> None:
        """Once per server: echo where it is offered fast enough, else forced decoding where that
        is, else first-token probabilities (a probe that fails on a server error is tried again)."""
        no_echo = self._check_echo()
        if no_echo is None:
            self.scoring = "echo"
            log.debug("LLM server at %s: options are scored from echoed log-probabilities", self.client.base)
            return
        no_forcing = self._check_forced()
        if no_forcing is None:
            self.scoring = "forced"
            self._slots = self._server_slots()
            log.debug("LLM server at %s: options are scored by forced decoding at %.0f ms a token, %d "
                      "at once (%s)", self.client.base, self._forced_seconds * 1000, self._slots, no_echo)
            return
        self._drop_scoring(f"{no_echo}; {no_forcing}")

    def _check_echo(self) -> str | None:
        """Whether the server echoes prompt log-probabilities, in a list and fast enough: None
        where it does, else why not."""
        prompt, option = ECHO_PROBE
        started = time.monotonic()
        try:
            self._echoed(prompt, [option, option], 1, trial=True)
        except _NoEcho:  # the trial converts any HTTP error: a list of prompts may be all it refused
            self._echo_batch = 1
            started = time.monotonic()
            try:
                self._echoed(prompt, [option], 1)
            except _NoEcho as exc:
                return f"no echo: {exc}"
        per_token = (time.monotonic() - started) / (PROBE_TOKENS * min(self._echo_batch, 2))
        if self.max_echo_seconds is not None and per_token > self.max_echo_seconds:
            return f"it echoes at {per_token * 1000:.0f} ms a token"
        return None

    def _check_forced(self) -> str | None:
        """Whether the server generates an option's exact tokens under a token grammar, reporting
        the model's own log-probabilities: None where it does, else why not. Measures its time a
        request and a token on the way (from when each streamed token arrives)."""
        prompt, option = FORCED_PROBE
        try:
            prompt_ids = self._token_ids(prompt)
            if prompt_ids is None:
                return "no tokenizer for forced decoding"
            ids = self._continuation_ids(prompt, prompt_ids, option)
            arrivals: list[tuple[float, int]] = []
            started = time.monotonic()
            pieces = self._forced(prompt, ids, trial=True, arrivals=arrivals)
        except _NoEcho as exc:
            return f"no forced decoding: {exc}"
        total = time.monotonic() - started
        text = "".join(token for token, _ in pieces)
        if len(pieces) != len(ids) or text != option:
            return f"forced decoding gave {len(pieces)} tokens, {text[:40]!r}, for {option!r}"
        if all(logprob > -1e-4 for _, logprob in pieces):  # certainties: probabilities after the grammar
            return "forced decoding reports the grammar's probabilities, not the model's"
        later = len(ids) - arrivals[0][1] if arrivals else 0
        if len(arrivals) >= 2 and later > 0:  # streamed in pieces: the gaps are the tokens' time
            per_token = (arrivals[-1][0] - arrivals[0][0]) / later
        else:
            per_token = total / len(ids)
        self._forced_seconds = per_token
        self._forced_overhead = max(0.0, total - per_token * len(ids))
        if self.max_forced_seconds is not None and per_token > self.max_forced_seconds:
            return f"it forces at {per_token * 1000:.0f} ms a token (limit {self.max_forced_seconds * 1000:.0f} ms)"
        return None

    def forced_seconds(self, option_tokens: list[int]) -> float:
        """The probe's estimate of forcing options of these token counts, with the parallel
        requests this generator sends."""
        requests = len(option_tokens) * self._forced_overhead + sum(option_tokens) * self._forced_seconds
        return requests / max(1, min(self._slots, len(option_tokens)))

    def _drop_scoring(self, reason: str) -> None:
        self.scoring = "first-token"
        self.capabilities = self.capabilities - {SCORES_OPTIONS}
        log.debug("LLM server at %s: no whole-option scoring (%s); options are scored by their "
                  "first-token probabilities", self.client.base, reason)

    def _server_slots(self) -> int:
        """Forced-decoding requests to send at once: $LONGQA_LLM_PARALLEL (1 when unset), at most
        the slots llama-server's /props names (`total_slots`; 1 where it does not say)."""
        wanted = self._parallel
        if wanted == 1:
            return 1
        try:
            props = self.client.get("props", absolute=self.client.root_url("props"))
        except HttpStatusError:
            return 1
        slots = props.get("total_slots")
        return max(1, min(slots, wanted)) if isinstance(slots, int) and not isinstance(slots, bool) else 1

    def _token_ids(self, text: str) -> list[int] | None:
        """The server's token ids for `text` (llama-server's /tokenize, llama-cpp-python's
        /extras/tokenize, which adds the BOS token); None where it offers neither."""
        while self._id_tokenizers:
            path = self._id_tokenizers[0]
            body = {"content": text, "add_special": False} if path == "tokenize" else {"input": text}
            try:
                answer = self.client.post(path, body, absolute=self.client.root_url(path))
            except HttpStatusError:
                self._id_tokenizers.pop(0)
                continue
            ids = answer.get("tokens")
            if isinstance(ids, list) and all(isinstance(t, int) and not isinstance(t, bool) and t >= 0 for t in ids):
                return ids
            self._id_tokenizers.pop(0)
        return None

    def _continuation_ids(self, prompt: str, prompt_ids: list[int], option: str) -> list[int]:
        """The option's tokens as they follow the prompt, split as in process: the tail of the
        prompt and option read together, or the option alone where the prompt's last token
        merges with the option's first."""
        joined = self._token_ids(prompt + option)
        if joined is None:
            raise _NoEcho("the tokenizer went away")
        if joined[:len(prompt_ids)] == prompt_ids and len(joined) > len(prompt_ids):
            return joined[len(prompt_ids):]
        alone, lead = self._token_ids(option) or [], self._token_ids("") or []
        alone = alone[len(lead):] if alone[:len(lead)] == lead else alone
        if not alone:
            raise _NoEcho(f"no tokens for the option {option[:40]!r}")
        return alone

    def _forced_scores(self, prompt: str, options: list[str], max_tokens: int) -> list[float] | None:
        """Each option's mean log-probability, forced; None where forcing these options would take
        more than FORCED_SHARE of the question deadline (the probe's estimate)."""
        prompt_ids = self._token_ids(prompt)
        if prompt_ids is None:
            raise _NoEcho("the tokenizer went away")
        forced_ids = [self._continuation_ids(prompt, prompt_ids, option)[:max_tokens] for option in options]
        for ids in forced_ids:
            check_fits(self.name, len(prompt_ids) + 1, len(ids), self.n_ctx)
        estimate = self.forced_seconds([len(ids) for ids in forced_ids])
        budget = self.client.deadline * FORCED_SHARE
        if self.max_forced_seconds is None and estimate > budget:
            log.debug("LLM server at %s: forcing %d options would take about %.1f s (budget %.1f s); "
                      "scored by first tokens", self.client.base, len(options), estimate, budget)
            return None

        def score(ids: list[int]) -> float:
            pieces = self._forced(prompt, ids)
            if len(pieces) > len(ids):
                raise ModelError(f"LLM server at {self.client.base}: forced decoding returned "
                                 f"{len(pieces)} tokens for {len(ids)}")
            # Fewer only where a forced token ends generation (an option spelling a control token).
            return sum(max(lp, LOG_FLOOR) for _, lp in pieces) / len(pieces) if pieces else LOG_FLOOR

        if self._slots == 1 or len(options) == 1:
            return [score(ids) for ids in forced_ids]
        # The first option alone puts the prompt in the server's cache before the others ask for it.
        first = score(forced_ids[0])
        pool = ThreadPoolExecutor(min(self._slots, len(options) - 1))
        futures = [pool.submit(score, ids) for ids in forced_ids[1:]]
        try:
            return [first] + [future.result() for future in futures]
        finally:
            pool.shutdown(wait=True, cancel_futures=True)

    def _forced(self, prompt: str, ids: list[int], *, trial: bool = False,
                arrivals: list[tuple[float, int]] | None = None) -> list[tuple[str, float]]:
        """Generate exactly `ids` after `prompt`: each token's text and reported log-probability
        (and in `arrivals`, when each streamed piece came and its tokens). Streamed:
        llama-cpp-python's server then computes log-probabilities for the generated tokens alone,
        while an unstreamed answer has it normalise every prompt position too."""
        payload = {"model": self.model, "prompt": self._plain(prompt), "max_tokens": len(ids), "temperature": 0.0,
                   "grammar": token_sequence(ids), "logprobs": 1, "stream": True}
        pieces: list[tuple[str, float]] = []
        try:
            for event in self.client.stream("completions", payload, retries=0 if trial else None):
                choices = event.get("choices")
                with answer_shape(self.client, "completions"):
                    if choices:
                        found = generated_logprobs(choices[0].get("logprobs"))
                        pieces += found
                        if arrivals is not None and found:
                            arrivals.append((time.monotonic(), len(found)))
        except HttpStatusError as exc:
            if trial or 400 <= exc.status < 500 or exc.status == 501:
                raise _NoEcho(f"HTTP {exc.status}") from None
            raise
        return pieces

    def _echoed(self, prompt: str, options: list[str], max_tokens: int, *, trial: bool = False) -> list[float]:
        """One request for `options` after `prompt`; _NoEcho where the server does not echo them."""
        prompt = self._plain(prompt)  # its length places the options' tokens (text_offset)
        texts = [prompt + self._plain(option) for option in options]
        payload = {"model": self.model, "prompt": texts if len(texts) > 1 else texts[0], "max_tokens": 1,
                   "temperature": 0.0, "echo": True, "logprobs": 1}
        try:
            answer = self.client.post("completions", payload, retries=0 if trial else None)
        except HttpStatusError as exc:
            if trial or 400 <= exc.status < 500 or exc.status == 501:
                raise _NoEcho(f"HTTP {exc.status}") from None
            raise
        choices = answer.get("choices") if isinstance(answer, dict) else None
        if not isinstance(choices, list) or len(choices) != len(texts):
            raise _NoEcho(f"{len(choices) if isinstance(choices, list) else 'no'} choices for {len(texts)} prompts")
        with answer_shape(self.client, "completions"):
            ordered = sorted(choices, key=lambda c: c.get("index", 0))
            return [option_score(c.get("logprobs"), len(prompt), len(text), max_tokens)
                    for c, text in zip(ordered, texts)]

    def _choose(self, prompt: str, labels: list[str]) -> dict[str, float]:
        """Fallback: let the server pick one label under a GBNF choice grammar."""
        # Under the grammar a server may spell a label in more tokens than its tokenizer makes of
        # it (" one week" as " ", "on", "e", " week"), but never in more tokens than bytes.
        longest = max(len(label.encode("utf-8")) for label in labels)
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


class _NoEcho(Exception):
    """The server does not score options this way: it does not echo prompt log-probabilities, or
    does not generate forced tokens with theirs (the reason is the message)."""


def generated_logprobs(logprobs: object) -> list[tuple[str, float]]:
    """Generated tokens' text and log-probability from either logprobs format: legacy OpenAI
    (`tokens`, `token_logprobs`) or the chat-style one (`content: [{token, logprob}]`). A token
    without a log-probability is a malformed answer (TypeError, read as one by answer_shape)."""
    if not logprobs:
        return []
    content = logprobs.get("content")
    if content is not None:
        pairs = [(str(item["token"]), float(item["logprob"])) for item in content]
    else:
        tokens, values = logprobs.get("tokens") or [], logprobs.get("token_logprobs") or []
        if len(tokens) != len(values):
            raise ValueError(f"{len(tokens)} tokens with {len(values)} log-probabilities")
        pairs = [(str(token), float(value)) for token, value in zip(tokens, values)]
    if any(math.isnan(value) or value > 0 for _, value in pairs):
        raise ValueError("a log-probability that is not one")
    return pairs


def option_score(logprobs: object, start: int, end: int, max_tokens: int) -> float:
    """Mean log-probability of the echoed tokens that reach past character `start` and begin
    before `end` (the option's; a token that merges the prompt's end with the option's start
    counts as the option's), at most the first `max_tokens` of them."""
    offsets = logprobs.get("text_offset") if isinstance(logprobs, dict) else None
    values = logprobs.get("token_logprobs") if isinstance(logprobs, dict) else None
    tokens = logprobs.get("tokens") if isinstance(logprobs, dict) else None
    if not offsets or not values or not tokens:
        raise _NoEcho("no prompt log-probabilities")
    picked = [value for offset, token, value in zip(offsets, tokens, values)
              if offset < end and offset + len(token) > start][:max_tokens]
    if not picked or any(value is None for value in picked):
        raise _NoEcho("no log-probabilities for the echoed option")
    return sum(float(value) for value in picked) / len(picked)


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
