"""llama-cpp-python, imported the one way longqa imports it: `from longqa.models.llama_lib import llama_cpp`.

A CUDA build of llama.cpp (llama-cpp-python 0.3.36 with GGML_CUDA=on, seen on an H100 with the
system's gcc 13 and CUDA 13) exports C++ standard-library code of its own from libggml-cuda.
When numpy is imported first — and longqa always imports it first — libstdc++ is already loaded,
but privately (numpy's C++ extensions are loaded RTLD_LOCAL), so libllama binds its stream
operators to libggml-cuda's copies and crashes at its first log line while loading a model
(`llama_model::print_info`). Making the loaded libstdc++ global before llama.cpp's libraries
load keeps those references on libstdc++ itself. A CPU build is unaffected either way.
"""

from __future__ import annotations

import ctypes
import sys


def _promote_libstdcxx() -> None:
    if not sys.platform.startswith("linux"):
        return
    try:
        ctypes.CDLL("libstdc++.so.6", mode=ctypes.RTLD_GLOBAL)
    except OSError:  # a libc without it (musl builds link it statically): nothing to promote
        pass


_promote_libstdcxx()

import llama_cpp  # noqa: E402  (after the promotion above)

__all__ = ["llama_cpp"]
