"""llama.cpp backend (llama-cpp-python): a Generator and an Embedder over local GGUF files.

All layers go to the GPU when this llama.cpp build can offload; otherwise the CPU uses the cores
free when the model is opened (models/threads.py; $LONGQA_THREADS overrides). llama.cpp's own
logging is captured (never printed) so a load failure can still name its reason in one line.
"""

from __future__ import annotations

import contextlib
import ctypes
import glob
import hashlib
import json
import os
import re
import time
from pathlib import Path
from typing import Iterator

import numpy as np

from longqa import config, environment
from longqa.errors import ModelError
from longqa.models.base import KEEPS_PREFIX, READS_ATTENTION, SCORES_OPTIONS
from longqa.models.files import GgufInfo, read_gguf_info, write_atomic
from longqa.models.grammar import compile_grammar
from longqa.models.threads import cpu_threads
from longqa.models.prompt_fit import check_fits, l2_normalise, renormalise, unique_labels

from longqa.models.llama_lib import LOG_TAIL, capture, closed_at_exit, llama_cpp  # noqa: E402  (after the project imports: it is the slow one)
from longqa.models.kept_file import read_state, state_cap  # noqa: E402

DEFAULT_GENERATOR_CTX = 8192
# The generator's KV cache is allocated for this many tokens at first, and reopened larger only
# when a call needs more (never past its window, n_ctx). Every call on a short handbook question
# needed under 600 tokens; 8,192 from the start cost 110-150 MiB more memory for nothing.
FIRST_ALLOCATION = 2048
# Tokens per embedding decode: several short texts share one batch. Attention in a batch spans
# all of its tokens (masked per text), so bigger is slower: 512 with flash attention measured
# 2.2x the tokens/s of 512 without it, and 1024 was 17% slower than 512.
EMBED_BATCH_TOKENS = 512
# Option scoring asks for the next-token logits at every option token, and llama.cpp keeps an
# output buffer as large as the most rows one decode ever asked for: a row is the whole vocabulary
# (1 MiB for gemma's 262,144 tokens), so 12 options of 6 tokens held 72 MiB more for the rest of
# the process. Each decode asks for at most this many MiB of rows.
OUTPUT_MIB = 32
SEED = 1234
KEPT_HEADS_DIR = "kept-heads"  # under the models folder: prompt heads' KV states (see _KeptPrefix)
RENDERED_KEPT = 256  # chat prompts remembered as rendered here (their control tokens are parsed)



def gpu_offload() -> bool:
    return bool(llama_cpp.llama_supports_gpu_offload())


def extra_buffers() -> bool:
    """Whether llama.cpp may put weights in its extra CPU buffer types (AMX tiles, repacked
    quantised blocks). Off on CPUs that advertise AMX: there llama.cpp's AMX matmul segfaulted
    at the first decode (seen on a virtual machine that lists amx_int8 but cannot run it), and a
    crash is worse than slower prompts. $LONGQA_EXTRA_BUFFERS=1 (or 0) decides instead."""
    decided = environment.extra_buffers()
    if decided is not None:
        return decided
    try:
        with open("/proc/cpuinfo", encoding="ascii", errors="replace") as handle:
            return not any(line.startswith("flags") and " amx_int8" in line for line in handle)
    except OSError:
        return True


GENERATOR_SEQUENCES = 16  # parallel sequences in the generator's context (option scoring)


@contextlib.contextmanager
def _defaults(function: str, **fields):
    """llama-cpp-python has no arguments for some llama.cpp parameters (`use_extra_bufts`,
    `n_seq_max`, `kv_unified`): set them in the defaults it reads while one model loads."""
    module = llama_cpp.llama.llama_cpp  # the low-level module as llama.py sees it
    original = getattr(module, function)

    def adjusted():
        params = original()
        for name, value in fields.items():
            setattr(params, name, value)
        return params

    setattr(module, function, adjusted)
    try:
        yield
    finally:
        setattr(module, function, original)


def open_llama(info: GgufInfo, *, n_ctx: int, embedding: bool, n_batch: int = 512,
               flash_attn: bool = True) -> llama_cpp.Llama:
    """Load a GGUF: every layer on the GPU when possible, else the free CPU cores.

    Flash attention is on: on CPU it measured 32% less time for a 1,100-token gemma prompt
    and 2.2x embedding throughput, with the same outputs."""
    threads = cpu_threads()
    LOG_TAIL.clear()
    try:
        # Option scoring wants several sequences sharing one KV cache (`kv_unified`, so each
        # still sees the whole window); llama-cpp-python gives a generator one.
        sequences = {} if embedding else {"n_seq_max": GENERATOR_SEQUENCES, "kv_unified": True}
        model = {} if extra_buffers() else {"use_extra_bufts": False}
        with _defaults("llama_model_default_params", **model), _defaults("llama_context_default_params", **sequences):
            llm = llama_cpp.Llama(
                model_path=str(info.path),
                n_gpu_layers=-1 if gpu_offload() else 0,
                n_threads=threads,
                n_threads_batch=threads,
                n_ctx=n_ctx,
                n_batch=min(n_batch, n_ctx),
                n_ubatch=min(n_batch, n_ctx),
                embedding=embedding,
                flash_attn=flash_attn,
                seed=SEED,
                verbose=False,
            )
    except (ValueError, RuntimeError, OSError) as exc:
        reason = _load_failure_reason() or str(exc)
        raise ModelError(f"{info.path}: llama.cpp cannot load this model ({reason})") from None
    capture()  # in case loading reset it
    closed_at_exit(llm)
    return llm


def _load_failure_reason() -> str:
    """llama.cpp's most specific complaint: 'error loading model: <why>' beats the generic
    'failed to load model' it logs last."""
    for line in reversed(LOG_TAIL):
        if "error loading model:" in line:
            return line.split("error loading model:", 1)[1].strip()
    return LOG_TAIL[-1] if LOG_TAIL else ""


def _digest(text: str, chars: int) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:chars]


_HEAD_NAME = re.compile(r"(?:([0-9a-f]{8})-[0-9a-f]{16}|[0-9a-f]{20})")  # model-head, or the earlier one-part name


def _remove_stale_heads(kept: Path) -> None:
    """Remove the kept heads of the same model name made with another model file or another
    llama.cpp build (or named the earlier way): they can never be loaded again, and an upgrade
    would otherwise leave a few MiB behind each time."""
    stem, model, _ = kept.stem.rsplit("-", 2)  # {model file's stem}-{model part}-{head part}
    for other in kept.parent.glob(f"{glob.escape(stem)}-*.kv"):
        name = _HEAD_NAME.fullmatch(other.stem[len(stem) + 1:])
        if name is not None and name.group(1) != model:
            with contextlib.suppress(OSError):
                other.unlink()


class _KeptPrefix:
    """The KV cells of one prompt head (sequence 0), copied out of the context, and kept on disk
    too (`file`), so that a fresh process loads them instead of reading the head again: a few
    MiB read in milliseconds against a few hundred tokens of prefill per head."""

    def __init__(self, tokens: list[int], file: Path | None = None, cap: int = 0):
        self.tokens, self.data, self.file = tokens, None, file  # data: None until read once
        self.from_disk = False
        if file is not None:  # only this user's regular file of at most `cap` bytes (kept_file.py)
            self.data = read_state(file, cap)
            self.from_disk = self.data is not None

    def save(self, ctx) -> None:
        size = llama_cpp.llama_state_seq_get_size(ctx, 0)
        self.data = (ctypes.c_uint8 * size)()
        llama_cpp.llama_state_seq_get_data(ctx, self.data, size, 0)
        self.from_disk = False
        if self.file is not None:
            try:
                write_atomic(self.file, bytes(self.data))
                _remove_stale_heads(self.file)
            except OSError:
                pass  # a cache: a read-only data folder only means the head is read again next time

    def load(self, ctx) -> bool:
        """Put the kept cells into the context; False when llama.cpp refuses them."""
        return bool(llama_cpp.llama_state_seq_set_data(ctx, self.data, len(self.data), 0))


class LlamaGenerator:
    """Generator over a local GGUF. Prompts are never truncated: too long raises PromptTooLong."""

    capabilities = frozenset({KEEPS_PREFIX, SCORES_OPTIONS, READS_ATTENTION})

    def __init__(self, path: str | os.PathLike, *, name: str, n_ctx: int | None = None, profile=None):
        self.info = read_gguf_info(path)
        self.profile = profile  # its declared Profile (models/profiles.py), None for an unknown file
        # A chat profile's prompts are rendered by its template, whose control tokens are parsed; so
        # are those of a file no profile declares whose metadata holds a chat template (a reader,
        # its decisions unmeasured), with the markers its template and the common formats spell.
        self.chats = bool((profile is None or profile.chat) and self.info.chat_template)
        from longqa.models import chat

        self.control_markers = profile.control_markers if profile is not None else tuple(dict.fromkeys(
            chat.markers_in(self.info.chat_template) + chat.COMMON_MARKERS))
        self._rendered: dict[str, None] = {}  # digests of the chat prompts rendered here, oldest first
        if self.info.is_encoder:
            raise ModelError(
                f"{self.info.path}: {self.info.architecture} is a sentence-embedding model, "
                "not a text generator (pass it as --embed-model)"
            )
        trained = self.info.context_length or DEFAULT_GENERATOR_CTX
        if n_ctx and n_ctx > trained:
            raise ModelError(f"{self.info.path}: context {n_ctx} exceeds the model's trained {trained} tokens")
        # n_ctx is the window prompts are fitted to; `allocated` is what the KV cache holds now.
        self.n_ctx = min(n_ctx or DEFAULT_GENERATOR_CTX, trained)
        self.n_ctx_train = trained
        self.name = name
        self.gpu_offload = gpu_offload()
        self.allocated = min(FIRST_ALLOCATION, self.n_ctx)
        self._llm = open_llama(self.info, n_ctx=self.allocated, embedding=False)
        self._handed_out = False  # the attention reader holds this model: never close it under it
        self._n_vocab = self._llm.n_vocab()
        self._kept: dict[str, _KeptPrefix] = {}  # prompt heads whose KV state is kept
        self.prefixes_loaded = 0  # how often a kept head spared re-reading it (bench, tests)
        self.reopened = 0  # how often a call needed a larger KV cache (bench, tests)
        # Prompt tokens evaluated (not found in the KV cache) and the seconds they took, summed over
        # calls: what the reader's reading costs, beside the question's other timings (`--json`).
        self.read_tokens = 0
        self.read_seconds = 0.0

    @property
    def llama(self):
        """The open llama.cpp model (READS_ATTENTION: the attention reader builds its own context on it)."""
        self._handed_out = True
        return self._llm

    def _room_for(self, tokens: int) -> None:
        """Make the KV cache hold `tokens` (already checked against the window): reopen the
        model with the next power of two, up to the window. The cache's contents and the kept
        heads' saved states are read again afterwards, so answers do not depend on the size."""
        if tokens <= self.allocated:
            return
        size = self.allocated
        while size < tokens:
            size *= 2
        size = min(size, self.n_ctx)
        if not self._handed_out:  # close first: the old and the new cache never coexist
            self._llm.close()
        self._llm = open_llama(self.info, n_ctx=size, embedding=False)
        self._handed_out = False
        self.allocated = size
        self.reopened += 1
        for kept in self._kept.values():
            kept.data = None

    def clear_cache(self) -> None:
        """Forget the KV cache: the next prompt is read whole (benchmarks time that read; tests
        compare against it). Kept prompt heads stay kept."""
        self._llm.reset()
        self._llm._ctx.kv_cache_seq_rm(-1, 0, -1)

    # -- tokens -----------------------------------------------------------------------------
    def count_tokens(self, text: str) -> int:
        return len(self._llm.tokenize(text.encode("utf-8"), add_bos=False, special=False))

    def _prompt_tokens(self, prompt: str) -> list[int]:
        # special=False: document text that happens to spell a control token stays plain text. A
        # chat prompt rendered here is the exception: its turns are control tokens, parsed, and
        # its texts had their markers broken when it was rendered (models/chat.py); any other
        # prompt (a completion-shaped one sent to a chat model) is read as plain text.
        special = self.chats and _digest(prompt, 32) in self._rendered
        return self._llm.tokenize(prompt.encode("utf-8"), add_bos=True, special=special)

    def chat_prompt(self, messages) -> str:
        """The prompt text of chat `messages` (models/chat.Message), through the GGUF's template."""
        from longqa.models import chat

        if not self.chats:
            raise ModelError(f"{self.name}: not a chat model")
        prompt = chat.render(self.info.chat_template, messages, self.control_markers)
        self._remember_rendered(prompt)
        return prompt

    def _remember_rendered(self, prompt: str) -> None:
        if len(self._rendered) >= RENDERED_KEPT:
            self._rendered.pop(next(iter(self._rendered)))
        self._rendered[_digest(prompt, 32)] = None

    def chat_head(self, system: str) -> str:
        """What every chat prompt with this system message starts with (kept as a prefix state)."""
        from longqa.models import chat

        head = chat.fixed_head(self.info.chat_template, system, self.control_markers)
        self._remember_rendered(head)
        return head

    # -- generation -------------------------------------------------------------------------
    def complete(self, prompt: str, *, max_tokens: int = 256, stop: list[str] | None = None,
                 grammar: str | None = None, temperature: float = 0.0) -> str:
        return "".join(self.stream(prompt, max_tokens=max_tokens, stop=stop, grammar=grammar,
                                   temperature=temperature))

    def stream(self, prompt: str, *, max_tokens: int = 256, stop: list[str] | None = None,
               grammar: str | None = None, temperature: float = 0.0) -> Iterator[str]:
        tokens = self._prompt_tokens(prompt)
        check_fits(self.name, len(tokens), max_tokens, self.n_ctx)
        self._room_for(len(tokens) + max_tokens)
        self._resume(tokens)
        compiled = compile_grammar(self._llm, grammar) if grammar else None
        started, unread = time.perf_counter(), len(tokens) - min(self._cached(tokens), len(tokens) - 1)
        try:
            # A token list is passed as-is: the same tokens label_probs evaluates, so the
            # longest common prefix already in the KV cache is reused between calls.
            chunks = self._llm.create_completion(
                tokens, max_tokens=max_tokens, stop=stop or [], temperature=temperature,
                top_k=40, top_p=0.95, min_p=0.05, repeat_penalty=1.0, seed=SEED,
                grammar=compiled, stream=True,
            )
            for chunk in chunks:
                if unread:  # the prompt was read (and its first token chosen) before the first chunk
                    self._count_read(unread, started)
                    unread = 0
                text = chunk["choices"][0]["text"]
                if text:
                    yield text
        except RuntimeError as exc:
            raise ModelError(f"{self.name}: generation failed ({exc})") from None

    # -- decisions --------------------------------------------------------------------------
    def label_probs(self, prompt: str, labels: list[str]) -> dict[str, float]:
        labels = unique_labels(labels)
        prompt_tokens = self._prompt_tokens(prompt)
        continuations = [self._continuation(prompt, prompt_tokens, label) for label in labels]
        check_fits(self.name, len(prompt_tokens), max(len(c) for c in continuations), self.n_ctx)
        self._room_for(len(prompt_tokens) + max(len(c) for c in continuations))
        first = self._prefill(prompt_tokens)
        firsts = [c[0] for c in continuations]
        if len(set(firsts)) == len(firsts):
            scores = [float(first[t]) for t in firsts]
        else:  # labels share a first token: score each whole label, rolling the KV cache back
            scores = [self._sequence_logprob(prompt_tokens, c, first) for c in continuations]
        return renormalise(labels, scores)

    def option_logprobs(self, prompt: str, options: list[str], *, max_tokens: int = 8) -> list[float]:
        """Mean log-probability per token of each option as the continuation of `prompt` (at most
        its first `max_tokens` tokens). The prompt is read once; then every option's tokens go
        through ONE decode, each option in its own sequence that shares the prompt's KV cells
        (a 9-option choice costs about what a 30-token prompt does, not 30 generation steps)."""
        prompt_tokens = self._prompt_tokens(prompt)
        continuations = [self._continuation(prompt, prompt_tokens, option)[:max_tokens] or [0] for option in options]
        check_fits(self.name, len(prompt_tokens), max(len(c) for c in continuations), self.n_ctx)
        # Options decoded together share the cache: each adds its own cells after the prompt's.
        together = min(self._llm.n_batch, sum(len(c) - 1 for c in continuations))
        self._room_for(min(len(prompt_tokens) + max(together, max(len(c) for c in continuations)), self.n_ctx))
        first = self._prefill(prompt_tokens)
        totals = [float(first[c[0]]) for c in continuations]
        pending = [(i, c) for i, c in enumerate(continuations) if len(c) > 1]
        n_seq = int(self._llm.context_params.n_seq_max)
        rows = min(self._llm.n_batch, max(1, OUTPUT_MIB * 2**20 // (4 * self._n_vocab)))
        while pending:
            chunk, used = [], 0
            while pending and len(chunk) < n_seq - 1 and used + len(pending[0][1]) - 1 <= rows:
                chunk.append(pending.pop(0))
                used += len(chunk[-1][1]) - 1
            if not chunk:  # one sequence per context: roll each option back in turn
                for i, c in pending:
                    totals[i] = self._sequence_logprob(prompt_tokens, c, first)
                break
            self._score_parallel(len(prompt_tokens), chunk, totals)
        return [total / len(c) for total, c in zip(totals, continuations)]

    def _score_parallel(self, n_prompt: int, chunk: list[tuple[int, list[int]]], totals: list[float]) -> None:
        llm, ctx = self._llm, self._llm._ctx
        batch = llm._batch.batch
        rows: list[tuple[int, int, int]] = []  # (option index, batch row, the token that row predicts)
        n = 0
        for seq, (i, tokens) in enumerate(chunk, start=1):
            ctx.kv_cache_seq_cp(0, seq, 0, n_prompt)
            for k, token in enumerate(tokens[:-1]):
                batch.token[n], batch.pos[n], batch.n_seq_id[n], batch.logits[n] = token, n_prompt + k, 1, True
                batch.seq_id[n][0] = seq
                rows.append((i, n, tokens[k + 1]))
                n += 1
        batch.n_tokens = n
        try:
            ctx.decode(llm._batch)
        except RuntimeError as exc:
            raise ModelError(f"{self.name}: evaluation failed ({exc})") from None
        finally:
            for seq in range(1, len(chunk) + 1):
                ctx.kv_cache_seq_rm(seq, -1, -1)
            llm._batch.reset()
            llm._requires_eval = True
        for i, row, target in rows:
            totals[i] += self._logprob_at(row, target)

    def _continuation(self, prompt: str, prompt_tokens: list[int], label: str) -> list[int]:
        """The label's tokens as the model would see them right after the prompt."""
        joined = self._prompt_tokens(prompt + label)
        if joined[: len(prompt_tokens)] == prompt_tokens and len(joined) > len(prompt_tokens):
            return joined[len(prompt_tokens):]
        return self._llm.tokenize(label.encode("utf-8"), add_bos=False, special=False)

    # -- kept prompt heads -------------------------------------------------------------------
    def keep_prefix(self, text: str) -> None:
        """Keep the KV state of `text` once it has been read, so that any later prompt starting
        with it skips reading it again, even after other prompts used the cache (the analysis
        prompt's examples, the answer prompt's fixed head: hundreds of tokens per question)."""
        if text not in self._kept:
            # The head's last token may merge with what follows it in a prompt ("Question:" +
            # " What"), so only the tokens before it are kept.
            tokens = self._prompt_tokens(text)[:-1]
            self._kept[text] = _KeptPrefix(tokens, self._kept_file(tokens), state_cap(self._llm.model, len(tokens)))

    def _kept_file(self, tokens: list[int]) -> Path | None:
        """Where a head's state is kept between processes: named by everything the state depends
        on. The model's part (the file, its size and time, the llama.cpp build) comes first, so
        that the files a replaced model or an upgraded build left can be told apart and removed
        (`_KeptPrefix.save`); CPU or GPU and the tokens name the head."""
        try:
            stat = self.info.path.stat()
        except OSError:
            return None
        model = json.dumps([str(self.info.path.resolve()), stat.st_size, stat.st_mtime_ns, llama_cpp.__version__])
        head = json.dumps([self.gpu_offload, tokens])
        return config.models_dir() / KEPT_HEADS_DIR / f"{self.info.path.stem}-{_digest(model, 8)}-{_digest(head, 16)}.kv"

    def _cached(self, tokens: list[int]) -> int:
        """How many of `tokens` the KV cache already holds, from the start."""
        cached = 0
        for a, b in zip(self._llm._input_ids, tokens):
            if a != b:
                break
            cached += 1
        return cached

    def _resume(self, tokens: list[int]) -> None:
        """Before `tokens` are read: when a kept head starts them and the cache holds less of
        them, load the head's saved state into the cache (reading and saving it the first time)."""
        cached = self._cached(tokens)
        for kept in self._kept.values():
            head = kept.tokens
            if len(head) <= cached or len(head) >= len(tokens) or tokens[: len(head)] != head:
                continue
            llm = self._llm
            llm._ctx.kv_cache_seq_rm(-1, 0, -1)
            llm.n_tokens = 0
            if kept.data is not None and not kept.load(llm.ctx):
                if not kept.from_disk:
                    raise ModelError("llama.cpp refused a kept prompt state")
                llm._ctx.kv_cache_seq_rm(-1, 0, -1)  # a stale file on disk: read the head again
                kept.data = None
            if kept.data is None:
                self._eval_logprobs(head)
                kept.save(llm.ctx)
            else:
                llm.input_ids[: len(head)] = head
                llm.n_tokens = len(head)
                self.prefixes_loaded += 1
            return

    def _prefill(self, tokens: list[int]) -> np.ndarray:
        """Evaluate `tokens`, reusing the cached prefix; next-token log-probabilities."""
        self._resume(tokens)
        llm = self._llm
        cached = min(self._cached(tokens), len(tokens) - 1)  # always decode one token for fresh logits
        llm.n_tokens = cached
        if not llm._ctx.kv_cache_seq_rm(-1, cached, -1):
            llm.reset()
        started = time.perf_counter()
        logprobs = self._eval_logprobs(tokens[cached:])
        self._count_read(len(tokens) - cached, started)
        return logprobs

    def _count_read(self, count: int, started: float) -> None:
        self.read_tokens += count
        self.read_seconds += time.perf_counter() - started

    def _eval_logprobs(self, tokens: list[int]) -> np.ndarray:
        try:
            self._llm.eval(tokens)
        except RuntimeError as exc:
            raise ModelError(f"{self.name}: evaluation failed ({exc})") from None
        self._llm._requires_eval = True  # our decode left logits the sampler must not trust
        return self._logprobs_at(-1)

    def _logits_at(self, row: int) -> np.ndarray:
        """The next-token logits at batch row `row` of the last decode (-1: its last), as a view."""
        return np.ctypeslib.as_array(llama_cpp.llama_get_logits_ith(self._llm.ctx, row), shape=(self._n_vocab,))

    def _logprob_at(self, row: int, token: int) -> float:
        """The log-probability of `token` at batch row `row` of the last decode: one value, in
        float32 (a row is the whole vocabulary, and option scoring reads dozens of rows)."""
        logits = self._logits_at(row)
        peak = logits.max()
        return float(logits[token] - peak) - float(np.log(np.exp(logits - peak).sum(dtype=np.float64)))

    def _logprobs_at(self, row: int) -> np.ndarray:
        """Next-token log-probabilities at batch row `row` of the last decode (-1: its last)."""
        logits = self._logits_at(row).astype(np.float64)
        peak = logits.max()
        return logits - peak - np.log(np.exp(logits - peak).sum())

    def _sequence_logprob(self, prompt_tokens: list[int], label: list[int], first: np.ndarray) -> float:
        total = float(first[label[0]])
        for i in range(1, len(label)):
            total += float(self._eval_logprobs([label[i - 1]])[label[i]])
        self._llm.n_tokens = len(prompt_tokens)  # roll back: drop the label's tokens again
        self._llm._ctx.kv_cache_seq_rm(-1, len(prompt_tokens), -1)
        return total


class LlamaEmbedder:
    """Sentence embeddings from a GGUF encoder with pooling (BERT-style). Texts longer than
    the encoder's trained context are cut to it (the encoder cannot see further)."""

    def __init__(self, path: str | os.PathLike, *, name: str, max_tokens: int | None = None,
                 batch_tokens: int = EMBED_BATCH_TOKENS):
        self.info = read_gguf_info(path)
        if not self.info.is_encoder:
            raise ModelError(
                f"{self.info.path}: {self.info.architecture} is a text generator, not a "
                "sentence-embedding model (use a BERT-style GGUF with pooling as --embed-model)"
            )
        self.name = name
        self.batch_tokens = batch_tokens
        self.max_tokens = min(self.info.context_length or 512, batch_tokens, max_tokens or batch_tokens)
        self.gpu_offload = gpu_offload()
        self._llm = open_llama(self.info, n_ctx=batch_tokens, embedding=True, n_batch=batch_tokens)
        if self._llm.pooling_type() == llama_cpp.LLAMA_POOLING_TYPE_NONE:
            raise ModelError(f"{self.info.path}: model has no pooling; cannot make one vector per text")
        self.dim = int(self._llm.n_embd())
        self.n_ctx = self.max_tokens
        self._n_seq_max = int(self._llm.context_params.n_seq_max)

    def count_tokens(self, text: str) -> int:
        return len(self._tokens(text))

    def _tokens(self, text: str) -> list[int]:
        tokens = self._llm.tokenize(text.encode("utf-8"), add_bos=True, special=False)
        if len(tokens) > self.max_tokens:  # keep the closing [SEP]
            tokens = tokens[: self.max_tokens - 1] + tokens[-1:]
        return tokens

    def embed(self, texts: list[str]) -> np.ndarray:
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        batch: list[tuple[int, list[int]]] = []
        used = 0
        for index, text in enumerate(texts):
            tokens = self._tokens(text)
            if batch and (used + len(tokens) > self.batch_tokens or len(batch) >= self._n_seq_max):
                self._decode(batch, out)
                batch, used = [], 0
            batch.append((index, tokens))
            used += len(tokens)
        if batch:
            self._decode(batch, out)
        return l2_normalise(out)

    def _decode(self, batch: list[tuple[int, list[int]]], out: np.ndarray) -> None:
        llm = self._llm
        llm._batch.reset()
        for seq_id, (_, tokens) in enumerate(batch):
            llm._batch.add_sequence(tokens, seq_id, True)
        llm._ctx.kv_cache_clear()
        try:
            llm._ctx.decode(llm._batch)
        except RuntimeError as exc:
            raise ModelError(f"{self.name}: embedding failed ({exc})") from None
        for seq_id, (index, _) in enumerate(batch):
            pointer = llama_cpp.llama_get_embeddings_seq(llm.ctx, seq_id)
            out[index] = np.ctypeslib.as_array(pointer, shape=(self.dim,))
        llm._batch.reset()
