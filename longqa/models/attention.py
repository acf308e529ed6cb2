"""Attention read out of llama.cpp: the one module that knows how llama.cpp lays out its tensors.

PECAN's edges are attention: with a point placed after its sources in one forward pass, the
point's tokens attend to the sources' tokens. llama.cpp never returns attention, but its graph
scheduler calls an eval callback (`cb_eval` in the context parameters) for every tensor it is
about to compute; with flash attention off, each layer's softmaxed attention is a tensor named
`kq_soft_max-<layer>` of shape ne = [n_kv, n_tokens, n_head, n_stream] (f32, rows contiguous).
The callback copies out only the rows of the tokens asked about, so memory stays at
rows x n_kv x heads per layer.

The pass runs in a context of its own over the generator's already loaded weights, so the
generator's KV cache (and its prompt reuse) is untouched. Everything here depends on this
llama.cpp's internals: `check_version` refuses an unchecked llama-cpp-python, every captured
tensor's type, shape and strides are checked before it is read, and a graph without the named
tensors is refused; each is one LongqaError (ModelError) saying what differed, never a wrong number.
"""

from __future__ import annotations

import ctypes
import re
from dataclasses import dataclass, field

import numpy as np

from longqa.errors import ModelError
from longqa.models.base import READS_ATTENTION, supports
from longqa.models.threads import cpu_threads

from longqa.models.llama_lib import llama_cpp  # noqa: E402
from llama_cpp import _internals  # noqa: E402

# The llama-cpp-python releases whose bundled llama.cpp was checked to name and lay out the
# softmaxed attention as described above (ggml_tensor with GGML_MAX_DIMS 4, GGML_MAX_SRC 10,
# GGML_MAX_OP_PARAMS 64, GGML_MAX_NAME 64).
CHECKED_VERSIONS = ("0.3.36",)
SOFTMAX_NAME = re.compile(r"^kq_soft_max-(\d+)$")
GGML_TYPE_F32 = 0
# Tokens one attention pass may hold: sources and points together, decoded as one micro-batch
# (so each layer's attention is one tensor). 2,048 covers a group of a few 300-token leaves.
ATTENTION_CTX = 2048


class _GgmlTensor(ctypes.Structure):
    """struct ggml_tensor as ggml.h of the checked version declares it (only read, never written)."""

    _fields_ = [
        ("type", ctypes.c_int),
        ("buffer", ctypes.c_void_p),
        ("ne", ctypes.c_int64 * 4),
        ("nb", ctypes.c_size_t * 4),
        ("op", ctypes.c_int),
        ("op_params", ctypes.c_int32 * 16),
        ("flags", ctypes.c_int32),
        ("src", ctypes.c_void_p * 10),
        ("view_src", ctypes.c_void_p),
        ("view_offs", ctypes.c_size_t),
        ("data", ctypes.c_void_p),
        ("name", ctypes.c_char * 64),
        ("extra", ctypes.c_void_p),
        ("padding", ctypes.c_char * 8),
    ]


def _load_tensor_get():
    """ggml_backend_tensor_get from the ggml libraries llama-cpp-python ships (not wrapped there)."""
    import pathlib

    lib_dir = pathlib.Path(llama_cpp.__file__).parent / "lib"
    for name in ("libggml-base.so", "libggml.so", "libllama.so", "ggml-base.dll", "libggml-base.dylib"):
        path = lib_dir / name
        if not path.exists():
            continue
        lib = ctypes.CDLL(str(path))
        function = getattr(lib, "ggml_backend_tensor_get", None)
        if function is not None:
            function.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_size_t]
            function.restype = None
            return function
    raise ModelError("llama.cpp: ggml_backend_tensor_get not found in the bundled ggml libraries; "
                     "attention edges need it (use --edges cosine)")


@dataclass
class Capture:
    """What one pass captured: per layer, attention rows [head, row, key] of rows `first`.. end."""
    first: int  # the first token (batch row) whose attention was kept
    layers: dict[int, np.ndarray]
    n_tokens: int
    masks: dict[int, int] = field(default_factory=dict)  # layer -> address of its attention mask


def check_version() -> None:
    version = getattr(llama_cpp, "__version__", "unknown")
    if version not in CHECKED_VERSIONS:
        raise ModelError(
            f"llama-cpp-python {version}: attention capture was checked only on "
            f"{', '.join(CHECKED_VERSIONS)} (tensor layouts change between llama.cpp builds); "
            "use --edges cosine or install a checked version"
        )


class AttentionReader:
    """Softmaxed attention of a generator's model, one forward pass at a time (no generation)."""

    def __init__(self, generator, n_ctx: int = ATTENTION_CTX):
        check_version()
        if not supports(generator, READS_ATTENTION):
            raise ModelError(f"{getattr(generator, 'name', 'this model')}: attention is readable only "
                             "from a local llama.cpp model (a server does not expose it)")
        self.name = generator.name
        llm = self._llm = generator.llama
        self._tensor_get = _load_tensor_get()
        self.n_ctx = min(n_ctx, int(generator.n_ctx_train))
        self._capture: Capture | None = None
        self._want_from = 0
        self._error: str | None = None
        self._names: list[str] = []  # tensor names seen (for the layout check's message)
        # The callback object must outlive the context: llama.cpp keeps only its address.
        self._callback = llama_cpp.ggml_backend_sched_eval_callback(self._on_tensor)
        params = llama_cpp.llama_context_default_params()
        params.n_ctx = self.n_ctx
        params.n_batch = self.n_ctx
        params.n_ubatch = self.n_ctx  # one micro-batch per pass: one attention tensor per layer
        params.n_seq_max = 1
        threads = cpu_threads()
        params.n_threads = params.n_threads_batch = threads
        params.flash_attn_type = llama_cpp.LLAMA_FLASH_ATTN_TYPE_DISABLED  # fused: no kq tensor
        params.embeddings = False
        params.cb_eval = self._callback
        params.cb_eval_user_data = None
        try:
            self._ctx = _internals.LlamaContext(model=llm._model, params=params, verbose=False)
        except ValueError as exc:
            raise ModelError(f"{self.name}: cannot open an attention context ({exc})") from None
        self._batch = _internals.LlamaBatch(n_tokens=self.n_ctx, embd=0, n_seq_max=1, verbose=False)
        self.n_swa = int(llama_cpp.llama_model_n_swa(llm._model.model))

    def tokenize(self, text: str, *, bos: bool = False) -> list[int]:
        return self._llm.tokenize(text.encode("utf-8"), add_bos=bos, special=False)

    # -- the callback -------------------------------------------------------------------------
    def _on_tensor(self, tensor_p, ask, user_data) -> bool:
        """Called by llama.cpp's scheduler: with ask=True "do you want this tensor?", then with
        ask=False once it is computed. Exceptions must not cross into C: they are kept and raised
        after the decode."""
        try:
            tensor = _GgmlTensor.from_address(tensor_p)
            name = tensor.name.decode("utf-8", errors="replace")
            match = SOFTMAX_NAME.match(name)
            if ask:
                if len(self._names) < 64:
                    self._names.append(name)
                return match is not None and self._capture is not None
            if match is not None and self._capture is not None:
                self._copy(int(match.group(1)), tensor)
        except Exception as exc:  # noqa: BLE001  (reported after the decode)
            self._error = f"{type(exc).__name__}: {exc}"
        return True  # False would abort the computation

    def _copy(self, layer: int, tensor: _GgmlTensor) -> None:
        n_kv, n_tokens, n_head, n_stream = (int(x) for x in tensor.ne)
        if tensor.type != GGML_TYPE_F32 or n_stream != 1 or n_tokens != self._capture.n_tokens \
                or n_kv < n_tokens or tensor.nb[0] != 4 or tensor.nb[1] != 4 * n_kv:
            raise ValueError(f"{tensor.name!r} has type {tensor.type}, ne {list(tensor.ne)}, nb {list(tensor.nb)}; "
                             f"expected f32 [n_kv>={n_tokens}, {n_tokens}, heads, 1], rows contiguous")
        first = self._capture.first
        rows = n_tokens - first
        out = np.empty((n_head, rows, n_kv), dtype=np.float32)
        for head in range(n_head):
            offset = head * tensor.nb[2] + first * tensor.nb[1]
            self._tensor_get(ctypes.c_void_p(ctypes.addressof(tensor)),
                             out[head].ctypes.data_as(ctypes.c_void_p), offset, rows * n_kv * 4)
        # Keys past the pass's tokens are empty cache cells (masked to 0): dropped here.
        self._capture.layers[layer] = out[:, :, :n_tokens].copy()
        self._capture.masks[layer] = int(tensor.src[1] or 0)  # softmax(kq, mask): the mask is src[1]

    # -- one pass -------------------------------------------------------------------------------
    def capture(self, tokens: list[int], first: int) -> Capture:
        """Decode `tokens` from an empty cache as one micro-batch; the attention rows of tokens
        `first`.. end from every layer."""
        if not 0 <= first < len(tokens):
            raise ValueError("first must index a token of the pass")
        if len(tokens) > self.n_ctx:
            raise ModelError(f"{self.name}: an attention pass of {len(tokens)} tokens exceeds {self.n_ctx}")
        self._capture = Capture(first=first, layers={}, n_tokens=len(tokens))
        self._error = None
        self._ctx.kv_cache_clear()
        self._batch.set_batch(tokens, n_past=0, logits_all=False)
        try:
            self._ctx.decode(self._batch)
        except RuntimeError as exc:
            raise ModelError(f"{self.name}: attention pass failed ({exc})") from None
        finally:
            captured, self._capture = self._capture, None
            self._ctx.kv_cache_clear()
        if self._error:
            raise ModelError(f"{self.name}: this llama.cpp lays out attention differently ({self._error})")
        if not captured.layers:
            seen = ", ".join(sorted(set(self._names))[:12])
            raise ModelError(f"{self.name}: no `kq_soft_max-<layer>` tensor in this llama.cpp's graph "
                             f"(saw: {seen}); attention edges cannot be read (use --edges cosine)")
        return captured

    def close(self) -> None:
        self._batch.close()
        self._ctx.close()


def global_layers(capture: Capture) -> list[int]:
    """The layers that attend over the whole pass. A model with sliding-window layers (gemma-3:
    five of every six) gives those a mask of their own; the layers sharing the less common mask
    are the global ones. Measured on gemma-3-270m with a point copied from the second of three
    sources: the global layers put 0.78, 0.50, 0.54 of it on that source, the windowed layers
    mostly favour the nearest source (0.12-0.44), so windowed layers only add recency noise.
    A model with one mask for all layers keeps all of them."""
    groups: dict[int, list[int]] = {}
    for layer in sorted(capture.layers):
        groups.setdefault(capture.masks.get(layer, 0), []).append(layer)
    if len(groups) < 2:
        return sorted(capture.layers)
    return min(groups.values(), key=lambda layers: (len(layers), layers[0]))


def span_weights(capture: Capture, spans: list[tuple[int, int]], rows: tuple[int, int]) -> np.ndarray:
    """PECAN's edge weights from one pass: the attention of tokens rows[0]..rows[1] (positions in
    the pass) to each source span. Each (layer, head, row) distribution is first restricted to the
    source tokens and renormalised (only attention between nodes counts; the attention sink at
    the first token and a row's attention to its own node would otherwise swamp it), then averaged
    over each span's tokens, over heads, layers and rows, and normalised to sum to 1."""
    first = capture.first
    lo, hi = rows[0] - first, rows[1] - first
    stacked = np.stack([capture.layers[layer][:, lo:hi, :] for layer in global_layers(capture)])
    inside = np.zeros(stacked.shape[-1], dtype=bool)
    for a, b in spans:
        inside[a:b] = True
    kept = stacked * inside
    kept /= np.maximum(kept.sum(axis=-1, keepdims=True), 1e-30)
    raw = np.array([kept[..., a:b].mean(axis=-1).mean() if b > a else 0.0 for a, b in spans], dtype=np.float64)
    total = raw.sum()
    return raw / total if total > 0 else np.full(len(spans), 1.0 / max(len(spans), 1))
