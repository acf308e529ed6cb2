"""`--llm-url` and `--embed-url` against a real OpenAI-compatible server: llama-cpp-python's own,
serving the default gemma GGUF on 127.0.0.1 (tests/conftest.py `llama_server`), started without
embeddings, as most generation servers are.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from longqa.models.http import JsonClient
from tests.cli import run, run_json

pytestmark = [pytest.mark.server, pytest.mark.models]
REPO = Path(__file__).resolve().parents[1]
SAMPLE = REPO / "examples" / "kestrel_valley_handbook.pdf"
SAMPLE_QUESTION = "How long can the standby generators run the works before the diesel runs out?"
PROMPT = "The standby generators at the works run on diesel. The fuel tanks hold enough for"


def test_the_server_continues_a_prompt_as_the_same_model_in_process(llama_server):
    from longqa.models.openai import OpenAIGenerator
    from longqa.models.resolve import load_generator

    served = OpenAIGenerator(llama_server, client=JsonClient(llama_server, deadline=120))
    assert served.count_tokens(PROMPT) == load_generator().count_tokens(PROMPT) + 1  # its count has the BOS
    completed = served.complete(PROMPT, max_tokens=8)
    # Greedy both ways, but the server computes without flash attention and in other batch sizes
    # (and reuses its cached prompt when asked again): logits differ in their last bits, so the
    # text may part ways after a few tokens where two tokens are nearly tied.
    assert completed.split(".")[0] == load_generator().complete(PROMPT, max_tokens=8).split(".")[0] == " 10 days"
    pieces = list(served.stream(PROMPT, max_tokens=8))
    assert len(pieces) > 1 and "".join(pieces).split(".")[0] == " 10 days"


def test_models_reports_the_server_and_the_stores_embedder(llama_server):
    result = run("models", "--json", "--llm-url", llama_server)
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["generator"]["source"] == "server" and report["generator"]["url"] == llama_server
    assert report["embedder"]["source"] == "embedded default"  # the server is not asked for vectors


def test_embeddings_named_from_a_server_without_them_are_refused_in_one_line(tmp_path, llama_server):
    db = tmp_path / "sample.db"
    result, _ = run_json("ingest", SAMPLE, db=db)
    assert result.returncode == 0, result.stderr
    result = run("ask", SAMPLE_QUESTION, "--embed-url", llama_server, db=db)
    lines = [line for line in result.stderr.splitlines() if line.startswith("longqa:")]
    assert result.returncode == 1 and len(lines) == 1
    assert lines[0].startswith("longqa: error: LLM server at ") and "embedding=True" in lines[0]
