"""The OpenAI-compatible backend against a small fake server speaking real HTTP on localhost."""

from __future__ import annotations

import json
import math
import re
import socket
import sys
import threading
import zlib
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import numpy as np
import pytest

from longqa.errors import ModelError
from longqa.models.http import JsonClient, api_base
from longqa.models.openai import OpenAIEmbedder, OpenAIGenerator, best_token, top_logprobs
from longqa.models.prompt_fit import PromptTooLong


class FakeServer(ThreadingHTTPServer):
    """Answers like llama-server: /v1/models, /v1/completions (+SSE), /v1/embeddings, /tokenize."""

    daemon_threads = True

    def __init__(self):
        super().__init__(("127.0.0.1", 0), Handler)
        self.requests: list[tuple[str, dict]] = []
        self.fail_next = 0  # answer 503 this many times first
        self.embeddings = True
        self.logprobs_format = "legacy"  # legacy | content | none
        self.next_token = {" yes": -0.2, " no": -1.9, " maybe": -4.0, "\n": -6.0}

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/v1"


class Handler(BaseHTTPRequestHandler):
    server: FakeServer

    def log_message(self, *args):  # keep test output clean
        pass

    def _send(self, status: int, body: dict) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        self.server.requests.append((self.path, {}))
        if self.path == "/v1/models":
            return self._send(200, {"data": [{"id": "fake-7b", "max_model_len": 64}]})
        self._send(404, {"error": {"message": "no such route"}})

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        self.server.requests.append((self.path, body))
        if self.server.fail_next > 0:
            self.server.fail_next -= 1
            return self._send(503, {"error": {"message": "loading model"}})
        if self.path == "/tokenize":
            return self._send(200, {"tokens": list(range(len(body["content"].split())))})
        if self.path == "/v1/embeddings":
            if not self.server.embeddings:
                return self._send(501, {"error": {"message": "This server does not support embeddings"}})
            return self._send(200, {"data": [{"index": i, "embedding": bag_of_words(t)} for i, t in enumerate(body["input"])][::-1]})
        if self.path == "/v1/completions":
            return self._complete(body)
        self._send(404, {"error": {"message": "no such route"}})

    def _complete(self, body: dict) -> None:
        if body.get("grammar"):  # obey a choice grammar: pick its first alternative
            text = json.loads(re.search(r'root ::= ("(?:[^"\\]|\\.)*")', body["grammar"]).group(1))
        else:
            text = " the answer is forty two"
        if body.get("stream"):
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.end_headers()
            for word in re.findall(r"\s*\S+", text):
                self.wfile.write(f"data: {json.dumps({'choices': [{'text': word}]})}\n\n".encode())
            self.wfile.write(b"data: [DONE]\n\n")
            return
        choice = {"text": text}
        fmt = self.server.logprobs_format
        if body.get("logprobs") and fmt == "legacy":
            choice["logprobs"] = {"top_logprobs": [self.server.next_token]}
        elif body.get("logprobs") and fmt == "content":
            alternatives = [{"token": t, "logprob": lp} for t, lp in self.server.next_token.items()]
            choice["logprobs"] = {"content": [{"token": " yes", "logprob": -0.2, "top_logprobs": alternatives}]}
        self._send(200, {"choices": [choice]})


def bag_of_words(text: str, dim: int = 32) -> list[float]:
    vector = np.zeros(dim)
    for word in re.findall(r"[a-z]+", text.lower()):
        vector[zlib.crc32(word.encode()) % dim] += 1.0
    return vector.tolist()


@pytest.fixture
def server():
    fake = FakeServer()
    thread = threading.Thread(target=fake.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    yield fake
    fake.shutdown()
    fake.server_close()


def closed_port_url() -> str:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


def test_api_base_accepts_host_or_v1_url():
    assert api_base("http://localhost:8080") == "http://localhost:8080/v1"
    assert api_base("http://localhost:8080/v1/") == "http://localhost:8080/v1"
    with pytest.raises(ModelError, match="not an http"):
        api_base("localhost:8080")


def test_generator_reads_model_and_context_from_the_server(server):
    generator = OpenAIGenerator(server.url)
    assert (generator.model, generator.n_ctx, generator.name) == ("fake-7b", 64, "server:fake-7b")
    assert generator.count_tokens("three little words") == 3  # the server's own tokenizer


def test_complete_and_stream_send_the_prompt_and_options(server):
    generator = OpenAIGenerator(server.url)
    assert generator.complete("Q: what?\nA:", max_tokens=8, stop=["\n"]) == " the answer is forty two"
    path, body = server.requests[-1]
    assert path == "/v1/completions"
    assert body["prompt"] == "Q: what?\nA:" and body["max_tokens"] == 8 and body["stop"] == ["\n"]
    assert body["model"] == "fake-7b" and body["temperature"] == 0.0
    pieces = list(generator.stream("Q: what?\nA:", max_tokens=8))
    assert len(pieces) == 5 and "".join(pieces) == " the answer is forty two"


def test_grammar_is_passed_through_as_gbnf(server):
    generator = OpenAIGenerator(server.url)
    assert generator.complete("Pick:", max_tokens=4, grammar='root ::= " no" | " yes"\n') == " no"
    assert server.requests[-1][1]["grammar"] == 'root ::= " no" | " yes"\n'


def test_prompt_that_does_not_fit_is_refused_before_sending(server):
    generator = OpenAIGenerator(server.url)
    sent = len(server.requests)
    with pytest.raises(PromptTooLong, match="64-token context window"):
        generator.complete("word " * 60, max_tokens=10)
    assert not any(path == "/v1/completions" for path, _ in server.requests[sent:])


@pytest.mark.parametrize("fmt", ["legacy", "content"])
def test_label_probs_from_top_logprobs_sum_to_one(server, fmt):
    server.logprobs_format = fmt
    probs = OpenAIGenerator(server.url).label_probs("Is it? Answer:", [" yes", " no"])
    assert math.isclose(sum(probs.values()), 1.0)
    expected_yes = math.exp(-0.2) / (math.exp(-0.2) + math.exp(-1.9))
    assert math.isclose(probs[" yes"], expected_yes, rel_tol=1e-9)
    body = server.requests[-1][1]
    assert body["max_tokens"] == 1 and body["logprobs"] >= 2


def test_label_probs_fall_back_to_a_grammar_choice_without_logprobs(server):
    server.logprobs_format = "none"
    probs = OpenAIGenerator(server.url).label_probs("Is it? Answer:", [" no", " yes"])
    assert probs == {" no": 1.0, " yes": 0.0}
    assert "grammar" in server.requests[-1][1]


def test_label_token_matching_prefers_the_most_specific_token():
    top = {" y": -3.0, " yes": -0.1, "yes": -2.0}
    assert best_token(" yes", top) == " yes"
    assert best_token(" no", top) is None
    assert top_logprobs({"logprobs": None}) == {}


def test_embeddings_are_ordered_by_index_and_normalised(server):
    embedder = OpenAIEmbedder(server.url)
    assert embedder.dim == 32 and embedder.name == "server:fake-7b"
    vectors = embedder.embed(["cats purr softly", "stock market earnings", "cats purr"])
    assert vectors.shape == (3, 32)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0)
    assert vectors[2] @ vectors[0] > vectors[2] @ vectors[1]


def test_retries_5xx_with_backoff_then_succeeds(server):
    client = JsonClient(server.url, backoff=0.01)
    server.fail_next = 2
    assert client.post("completions", {"prompt": "x", "max_tokens": 1})["choices"]
    assert sum(path == "/v1/completions" for path, _ in server.requests) == 3


def test_retries_are_bounded(server):
    client = JsonClient(server.url, backoff=0.01, retries=2)
    server.fail_next = 10
    with pytest.raises(ModelError, match="HTTP 503 .*loading model"):
        client.post("completions", {"prompt": "x"})
    assert server.fail_next == 7  # one try plus two retries


def test_client_errors_are_not_retried(server):
    client = JsonClient(server.url, backoff=0.01)
    with pytest.raises(ModelError, match="HTTP 404"):
        client.post("no-such-endpoint", {})
    assert sum(path == "/v1/no-such-endpoint" for path, _ in server.requests) == 1


def test_down_server_is_one_clear_line():
    url = closed_port_url()
    with pytest.raises(ModelError) as caught:
        OpenAIGenerator(url, client=JsonClient(url, backoff=0.01))
    message = str(caught.value)
    assert message.startswith(f"cannot reach LLM server at {url}: ") and "\n" not in message


def test_cli_with_down_server_exits_1_with_one_line_and_stores_nothing(tmp_path, monkeypatch, capsys):
    from longqa.cli import main

    doc = tmp_path / "notes.md"
    doc.write_text("# Notes\n\nSome text about cats and their habits.\n")
    store = tmp_path / "store.db"
    url = closed_port_url()
    monkeypatch.setattr("longqa.models.http.BACKOFF_SECONDS", 0.01)
    monkeypatch.setattr(sys, "argv", ["longqa", "ingest", str(doc), "-d", str(store), "--llm-url", url])
    with pytest.raises(SystemExit) as exited:
        main()
    assert exited.value.code == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"longqa: error: cannot reach LLM server at {url}: [Errno 111] Connection refused"]
    from longqa.store import open_db

    assert open_db(store).execute("SELECT COUNT(*) FROM documents").fetchone()[0] == 0


def test_models_command_reports_the_server(server, monkeypatch, capsys):
    from longqa.cli import main

    monkeypatch.setattr(sys, "argv", ["longqa", "models", "--json", "--llm-url", server.url])
    with pytest.raises(SystemExit) as exited:
        main()
    assert exited.value.code == 0
    report = json.loads(capsys.readouterr().out)
    assert report["generator"] == {"source": "server", "url": server.url, "name": "server:fake-7b",
                                   "context_length": 64, "gpu_offload": None}
    assert report["embedder"]["source"] == "server" and report["embedder"]["dim"] == 32
