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


@pytest.fixture
def store(tmp_path, db_path, monkeypatch):
    """A real store of the generated reactor handbook, with the CLI's model loaders answering with
    the shared fakes (tests/fakes.py): for tests of the `ask` command's control flow."""
    from longqa.models import resolve
    from tests.ask_support import build_store, reactor_handbook
    from tests.fakes import FakeEmbedder, FakeGenerator

    build_store(db_path, {"handbook.md": reactor_handbook()}, tmp_path)
    monkeypatch.setattr(resolve, "load_generator", lambda model=None, llm_url=None, **kw: FakeGenerator())
    monkeypatch.setattr(resolve, "load_embedder", lambda embed_model=None, llm_url=None: FakeEmbedder())
    return db_path
