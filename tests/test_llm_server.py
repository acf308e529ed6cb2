"""`--llm-url` against a real OpenAI-compatible server: llama-cpp-python's own, serving the
default gemma GGUF on 127.0.0.1 (tests/conftest.py `llama_server`), with the sample handbook.

The server is started without embeddings (its default), as most generation servers are: the
store's own embedder answers for the question, so the server is never asked for vectors.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cli import run_json

pytestmark = [pytest.mark.server, pytest.mark.models]
REPO = Path(__file__).resolve().parents[1]
SAMPLE = REPO / "examples" / "kestrel_valley_handbook.pdf"
SAMPLE_QUESTION = "How long can the standby generators run the works before the diesel runs out?"


@pytest.fixture(scope="module")
def sample_store(tmp_path_factory) -> Path:
    db = tmp_path_factory.mktemp("server-store") / "sample.db"
    result, _ = run_json("ingest", SAMPLE, db=db)
    assert result.returncode == 0, result.stderr
    return db


def ask(db: Path, *extra: str) -> dict:
    result, data = run_json("ask", SAMPLE_QUESTION, "--budget", "800", *extra, db=db)
    assert result.returncode == 0, result.stderr
    assert "embeddings" not in result.stderr
    return data


def test_the_quick_start_question_through_the_server_matches_in_process(sample_store, llama_server):
    local = ask(sample_store)
    served = ask(sample_store, "--llm-url", llama_server)
    assert local["answer"].startswith("about 52 hours [")
    assert served["answer"] == local["answer"]
    assert [q["text"] for q in served["quotes"]] == [q["text"] for q in local["quotes"]]
    assert served["citations"] == local["citations"]


def test_a_server_without_embeddings_answers_and_a_named_one_is_refused_in_one_line(sample_store, llama_server):
    result, _ = run_json("ask", SAMPLE_QUESTION, "--embed-url", llama_server, db=sample_store)
    lines = result.stderr.strip().splitlines()
    assert result.returncode == 1 and len(lines) == 1
    assert "embedding=True" in lines[0] and lines[0].startswith("longqa: error: LLM server at ")
