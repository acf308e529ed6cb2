"""llama.cpp loads after libstdc++ is made global (models/llama_lib.py). On a CUDA build, with
numpy imported first (as longqa always does), libllama otherwise bound its stream operators to
libggml-cuda's copies and crashed loading any model (seen on an H100)."""

from __future__ import annotations

import subprocess
import sys

import pytest

CHECK = """
import ctypes
import numpy  # loads libstdc++ privately, as every longqa command does before llama.cpp
symbol = "_ZNSo9_M_insertIlEERSoT_"  # std::ostream::_M_insert<long>: llama_model::print_info's
import {module}
print(hasattr(ctypes.CDLL(None), symbol))
"""


def _globally_visible_after(module: str) -> bool:
    result = subprocess.run([sys.executable, "-c", CHECK.format(module=module)],
                            capture_output=True, text=True, check=True)
    return result.stdout.strip() == "True"


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the dynamic linker's global scope is a Linux matter")
def test_libstdcxx_is_global_before_llama_cpp_loads():
    assert _globally_visible_after("longqa.models.llama_lib")
    assert _globally_visible_after("longqa.models.llama")  # the generator's module imports it that way
