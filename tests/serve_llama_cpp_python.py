"""llama-cpp-python's server, run as `python -m llama_cpp.server ARGS` runs it, but with llama.cpp's
extra CPU buffer types off wherever longqa turns them off in process (models/llama.extra_buffers:
on CPUs that advertise AMX its matmul stops the server at the first decode), so the `--llm-url`
tests compare the same model computed the same way."""

import contextlib
import runpy
import sys

from longqa.models.llama import _defaults, extra_buffers

if __name__ == "__main__":
    with contextlib.ExitStack() as stack:
        if not extra_buffers():
            stack.enter_context(_defaults("llama_model_default_params", use_extra_bufts=False))
        sys.argv[0] = "llama_cpp.server"
        runpy.run_module("llama_cpp.server", run_name="__main__", alter_sys=True)
