"""A server that answers a byte at a time is cut off at the deadline, not at the end of its answer:
the deadline holds per read (headers, body and streamed events alike), and the message says how
long it really took. The server (tests/models/test_openai.py) drips on 127.0.0.1 for at most some
15 s, then stops by itself.
"""

from __future__ import annotations

import re
import time

import pytest

from longqa.errors import ModelError
from longqa.models.http import JsonClient
from tests.models.test_openai import ask_with_server, server  # noqa: F401 -- the fixture

ENOUGH = 2.0  # the slack past the deadline the check allows


@pytest.mark.parametrize("drip", ["all", "body"])
def test_a_dripping_answer_ends_at_the_deadline(server, drip):  # noqa: F811
    server.drip["/v1/completions"] = drip
    client = JsonClient(server.url, deadline=1.5, backoff=0.01)
    started = time.monotonic()
    with pytest.raises(ModelError, match=r"timed out after 1\.\d s \(deadline 1\.5 s, LONGQA_LLM_TIMEOUT\)") as caught:
        client.post("completions", {"prompt": "Q:"})
    assert time.monotonic() - started < 1.5 + ENOUGH
    assert "\n" not in str(caught.value)


def test_a_dripping_stream_ends_at_the_deadline(server):  # noqa: F811
    server.drip["/v1/completions"] = "body"
    client = JsonClient(server.url, deadline=1.5, backoff=0.01)
    started = time.monotonic()
    with pytest.raises(ModelError, match=r"timed out after 1\.\d s|no answer from completions in time"):
        list(client.stream("completions", {"prompt": "Q:", "stream": True}))
    assert time.monotonic() - started < 1.5 + ENOUGH


def test_an_answer_that_comes_in_time_is_read_whole(server):  # noqa: F811
    server.drip["/v1/completions"] = "body"
    server.drip_seconds = 0.001
    client = JsonClient(server.url, deadline=20, backoff=0.01)
    assert client.post("completions", {"prompt": "Q:"})["choices"][0]["text"] == " the answer is forty two"
    assert list(client.stream("completions", {"prompt": "Q:", "stream": True})) == [
        {"choices": [{"text": " forty"}]}, {"choices": [{"text": " two"}]}]


def test_ask_against_a_dripping_server_exits_1_within_the_deadline(server, monkeypatch, capsys, tmp_path):  # noqa: F811
    monkeypatch.setenv("LONGQA_LLM_TIMEOUT", "3")
    server.drip["/v1/completions"] = "all"
    code, output, seconds = ask_with_server(monkeypatch, capsys, tmp_path, server)
    lines = output.err.strip().splitlines()
    assert code == 1 and seconds < 3 + ENOUGH, (seconds, lines)
    assert len(lines) == 1 and re.search(r"timed out after 3\.\d s \(deadline 3 s", lines[0]), lines


@pytest.mark.parametrize("value", ["1e12", "1e15", "1e300", "86401"])
def test_a_deadline_past_a_day_is_refused_in_one_line_not_an_overflow(server, monkeypatch, capsys, tmp_path, value):  # noqa: F811
    # Python's socket timeout overflows its clock near 1e10 s: the setting is bounded before any call.
    monkeypatch.setenv("LONGQA_LLM_TIMEOUT", value)
    code, output, _ = ask_with_server(monkeypatch, capsys, tmp_path, server)
    assert code == 1
    assert output.err.strip().splitlines() == [
        f"longqa: error: LONGQA_LLM_TIMEOUT={value!r}: not a positive number of seconds up to 86400 (a day)"]


def test_a_deadline_of_a_day_is_taken(server, monkeypatch):  # noqa: F811
    monkeypatch.setenv("LONGQA_LLM_TIMEOUT", "86400")
    client = JsonClient(server.url, backoff=0.01)
    assert client.post("completions", {"prompt": "Q:"})["choices"][0]["text"] == " the answer is forty two"
