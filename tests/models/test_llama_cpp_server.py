"""`--llm-url` against llama.cpp's own server (`llama-server`, tests/conftest.py `llama_cpp_server`):
it computes reported log-probabilities natively, so candidates are scored by forced decoding, one
request at a time, and the answers are the in-process ones.
"""

from __future__ import annotations

import math

import pytest

from longqa.models import SCORES_OPTIONS, supports
from longqa.models.http import JsonClient
from tests.command import run_json
from tests.models.test_llm_server import OPTIONS, PROMPT, SAMPLE, SAMPLE_QUESTION

pytestmark = [pytest.mark.server, pytest.mark.models]


# A deadline under which forcing is chosen however loaded the machine is: whether it fits the
# default 30 s is a matter of speed, measured in bench/RESULTS.md and eval/, not asserted here.
DEADLINE = {"LONGQA_LLM_TIMEOUT": "600"}


def test_llama_server_is_forced_through_options(llama_cpp_server, monkeypatch):
    from longqa.models.openai import OpenAIGenerator
    from longqa.models.resolve import load_generator

    served = OpenAIGenerator(llama_cpp_server, client=JsonClient(llama_cpp_server, deadline=600))
    scores = served.option_logprobs(PROMPT, OPTIONS)
    assert served.scoring == "forced" and supports(served, SCORES_OPTIONS)
    assert served._slots == 1  # one request at a time unless asked: each slot reads the prompt itself
    in_process = load_generator().option_logprobs(PROMPT, OPTIONS)
    assert scores == pytest.approx(in_process, abs=0.1)
    assert max(scores) == scores[0] and min(scores) == scores[2]
    monkeypatch.setenv("LONGQA_LLM_PARALLEL", "8")
    side_by_side = OpenAIGenerator(llama_cpp_server, client=JsonClient(llama_cpp_server, deadline=600))
    assert side_by_side.option_logprobs(PROMPT, OPTIONS) == pytest.approx(scores, abs=0.1)
    assert side_by_side._slots == 4  # as many as its /props names


def test_llama_server_first_token_probabilities_match_in_process(llama_cpp_server):
    from longqa.models.openai import OpenAIGenerator
    from longqa.models.resolve import load_generator

    served = OpenAIGenerator(llama_cpp_server, client=JsonClient(llama_cpp_server))
    labels = [" 10", " about", " one"]
    served_probs = served.label_probs(PROMPT, labels)
    in_process = load_generator().label_probs(PROMPT, labels)
    # The same model to within llama.cpp's own numeric noise: the server and the library build
    # llama.cpp apart and split a prompt into batches differently (a prompt read after another
    # keeps their common prefix), which moves a log-probability by a few hundredths of a nat; the
    # bound is the option test's above, and the order of the labels must hold.
    assert {label: math.log(p) for label, p in served_probs.items()} == pytest.approx(
        {label: math.log(p) for label, p in in_process.items()}, abs=0.1)
    assert sorted(labels, key=served_probs.get) == sorted(labels, key=in_process.get)


def test_the_readme_question_through_llama_server_gets_the_in_process_answer(tmp_path, llama_cpp_server,
                                                                          computes_as_in_process):
    db = tmp_path / "sample.db"
    result, _ = run_json("ingest", SAMPLE, db=db)
    assert result.returncode == 0, result.stderr
    result, served = run_json("ask", SAMPLE_QUESTION, "--llm-url", llama_cpp_server, db=db, env=DEADLINE)
    assert result.returncode == 0, result.stderr
    result, in_process = run_json("ask", SAMPLE_QUESTION, db=db)
    assert result.returncode == 0, result.stderr
    assert [c["node_id"] for c in served["context"]] == [c["node_id"] for c in in_process["context"]]
    assert served["answer"] == in_process["answer"]
    assert served["quotes"] == in_process["quotes"]
    assert served["citations"] == in_process["citations"]
