"""onnxruntime is imported where loading it cannot overflow a stack.

onnxruntime 1.30.0 reads the process's command line recursively while its module loads (about 260
bytes of stack per byte of it): `longqa ask "<a question of 33 KB or more>"` died of SIGSEGV on the
8 MB main-thread stack before any error could be reported. A long command line is now imported on
a thread whose stack is sized from it.
"""

from __future__ import annotations

import importlib.abc
import importlib.util
import subprocess
import sys
import threading

import pytest

from longqa.models import onnx_embed

MEASURED_STACK_PER_BYTE = 260  # what onnxruntime 1.30.0 needed, per byte of the command line


class FakeOnnxruntime(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Stands in for onnxruntime and records the thread each import ran on."""

    def __init__(self):
        self.threads: list[str] = []

    def find_spec(self, name, path, target=None):
        return importlib.util.spec_from_loader(name, self) if name == "onnxruntime" else None

    def create_module(self, spec):
        return None

    def exec_module(self, module):
        self.threads.append(threading.current_thread().name)


@pytest.fixture
def fake(monkeypatch):
    """The fake is found first; afterwards the real module (if it was loaded) is back."""
    finder = FakeOnnxruntime()
    real = sys.modules.pop("onnxruntime", None)
    monkeypatch.setattr(sys, "meta_path", [finder, *sys.meta_path])
    yield finder
    sys.modules.pop("onnxruntime", None)
    if real is not None:
        sys.modules["onnxruntime"] = real


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/proc/self/cmdline is Linux's")
def test_command_line_bytes_is_what_the_kernel_shows():
    assert onnx_embed.command_line_bytes() == sum(len(arg.encode()) + 1 for arg in sys.orig_argv)


def test_a_long_command_line_imports_onnxruntime_on_a_thread_with_a_stack_to_match(fake, monkeypatch):
    monkeypatch.setattr(onnx_embed, "command_line_bytes", lambda: 100_000)
    asked: list[int] = []
    real = threading.stack_size
    monkeypatch.setattr(threading, "stack_size", lambda *size: (asked.extend(size), real(*size))[1])
    before = real()
    module = onnx_embed.import_onnxruntime()
    assert module is sys.modules["onnxruntime"]
    assert fake.threads == ["onnxruntime-import"]
    assert asked[0] >= 100_000 * MEASURED_STACK_PER_BYTE + (8 << 20)
    assert real() == before  # later threads get the usual stack
    assert onnx_embed.import_onnxruntime() is module and fake.threads == ["onnxruntime-import"]  # once


def test_a_short_command_line_imports_onnxruntime_where_it_is(fake, monkeypatch):
    monkeypatch.setattr(onnx_embed, "command_line_bytes", lambda: 200)
    onnx_embed.import_onnxruntime()
    assert fake.threads == [threading.current_thread().name]


def test_onnxruntime_missing_is_an_import_error_for_the_caller(monkeypatch, tmp_path):
    monkeypatch.setattr(onnx_embed, "command_line_bytes", lambda: 100_000)
    monkeypatch.setitem(sys.modules, "onnxruntime", None)  # as if not installed
    with pytest.raises(ImportError):
        onnx_embed.import_onnxruntime()
    with pytest.raises(onnx_embed.ModelError, match="onnxruntime is not installed"):
        onnx_embed.OnnxEmbedder(tmp_path / "model.onnx", tmp_path / "vocab.gguf", name="x", max_tokens=8, threads=1)


@pytest.mark.models
def test_the_default_embedder_loads_and_embeds_under_a_100_kb_command_line():
    code = "from longqa.models.resolve import load_embedder; print(load_embedder().embed(['diesel']).shape)"
    result = subprocess.run([sys.executable, "-c", code, "q" * 100_000], capture_output=True, text=True,
                            timeout=300)
    assert result.returncode == 0, result.stderr[-2000:]
    assert "(1, 384)" in result.stdout
