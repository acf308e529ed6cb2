"""llama-cpp-python, imported the one way longqa imports it: `from longqa.models.llama_lib import llama_cpp`.

A CUDA build of llama.cpp (llama-cpp-python 0.3.36 with GGML_CUDA=on, seen on an H100 with the
system's gcc 13 and CUDA 13) exports C++ standard-library code of its own from libggml-cuda.
When numpy is imported first — and longqa always imports it first — libstdc++ is already loaded,
but privately (numpy's C++ extensions are loaded RTLD_LOCAL), so libllama binds its stream
operators to libggml-cuda's copies and crashes at its first log line while loading a model
(`llama_model::print_info`). Making the loaded libstdc++ global before llama.cpp's libraries
load keeps those references on libstdc++ itself. A CPU build is unaffected either way.

llama.cpp's log goes to `LOG_TAIL` from the moment the library loads, never to the terminal: the
first model a command loads may be the embedder's tokenizer, and llama-cpp-python's own logger
would print its warnings (a context longer than a tokenizer-only file's "training context").
Warnings and errors are kept for error messages.
"""

from __future__ import annotations

import atexit
import ctypes
import sys
import weakref
from collections import deque


def _promote_libstdcxx() -> None:
    if not sys.platform.startswith("linux"):
        return
    try:
        ctypes.CDLL("libstdc++.so.6", mode=ctypes.RTLD_GLOBAL)
    except OSError:  # a libc without it (musl builds link it statically): nothing to promote
        pass


_promote_libstdcxx()

import llama_cpp  # noqa: E402  (after the promotion above)

LOG_TAIL: deque[str] = deque(maxlen=8)
_WARN, _ERROR, _CONT = 3, 4, 5  # ggml_log_level values
_capturing = False


@llama_cpp.llama_log_callback
def capture_log(level: int, text: bytes, user_data) -> None:
    global _capturing
    if level != _CONT:
        _capturing = level in (_WARN, _ERROR)
    line = text.decode("utf-8", errors="replace").strip()
    if _capturing and line:
        LOG_TAIL.append(line)


def capture() -> None:
    """(Re)install the capture: loading a model through llama-cpp-python may reset the callback."""
    llama_cpp.llama_log_set(capture_log, ctypes.c_void_p(0))


capture()

_OPEN: "weakref.WeakSet[llama_cpp.Llama]" = weakref.WeakSet()


def closed_at_exit(llm: "llama_cpp.Llama") -> None:
    """Free `llm` before interpreter teardown, when llama-cpp-python's own finaliser can fail
    noisily ('Exception ignored in Llama.__del__'): every model longqa opens."""
    _OPEN.add(llm)


@atexit.register
def _close_all() -> None:
    for llm in list(_OPEN):
        try:
            llm.close()
        except Exception:
            pass


__all__ = ["LOG_TAIL", "capture", "closed_at_exit", "llama_cpp"]
