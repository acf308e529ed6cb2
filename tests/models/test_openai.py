"""The OpenAI-compatible backend against a small fake server speaking real HTTP on localhost."""

from __future__ import annotations

import json
import math
import re
import socket
import sys
import threading
import time
import zlib
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import numpy as np
import pytest

from longqa.errors import ModelError
from longqa.models.http import JsonClient, api_base
from longqa.models.base import SCORES_OPTIONS, supports
from longqa.models.openai import OpenAIEmbedder, OpenAIGenerator, best_token, generated_logprobs, top_logprobs
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
        self.context = 64  # the context window /v1/models advertises
        self.redirect_to: str | None = None  # answer every request with 302 to this URL
        self.hang: set[str] = set()  # paths whose requests are never answered (until released)
        self.released = threading.Event()
        self.replies: dict[str, object] = {}  # path -> JSON sent instead of the normal answer
        self.drip: dict[str, str] = {}  # path -> "all" | "body": that much of its answer sent a byte at a time
        self.drip_seconds = 0.05  # between two dripped bytes (an answer of some 300 bytes: 15 s)
        self.embeddings_error = (501, "This server does not support embeddings")
        self.chat_reply = "45 seconds [2]"  # what /chat/completions answers
        self.pieces: list[str] = []  # the tokenizer's vocabulary: a word with its leading spaces
        self.tokenizer = True  # /tokenize offered
        self.forced = "model"  # a token grammar: model (its log-probabilities) | renormalised | ignored | refused
        self.forced_logprobs: dict[str, float] = {}  # a forced piece's log-probability (else -1.0)
        self.slots: int | None = None  # /props total_slots (None: no /props)
        self.delay = 0.0  # seconds each forced request takes before its first token
        self.token_delay = 0.0  # and between its tokens
        self.in_flight = self.most_in_flight = 0
        self.lock = threading.Lock()

    def token_ids(self, text: str) -> list[int]:
        ids = []
        for piece in re.findall(r"\s*\S+", text):
            if piece not in self.pieces:
                self.pieces.append(piece)
            ids.append(self.pieces.index(piece))
        return ids

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

    def _drip(self, head: bytes, body: bytes) -> None:
        """A whole answer sent slowly: the body (and the status line and headers, where asked) a
        byte at a time, until it is all sent or the client hangs up."""
        if self.server.drip[self.path] == "body":
            self.wfile.write(head)
            head = b""
        try:
            for byte in head + body:
                self.wfile.write(bytes([byte]))
                self.wfile.flush()
                time.sleep(self.server.drip_seconds)
        except OSError:
            pass

    def _special(self) -> bool:
        """Redirect, hang or a scripted reply, when the test asked for one."""
        if self.server.redirect_to:
            self.send_response(302)
            self.send_header("Location", self.server.redirect_to + self.path)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return True
        if self.path in self.server.hang:
            self.server.released.wait(30)
            return True
        if self.path in self.server.drip and getattr(self, "body", {}).get("stream"):
            events = [f"data: {json.dumps({'choices': [{'text': word}]})}\n\n" for word in (" forty", " two")]
            self._drip(b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n",
                       ("".join(events) + "data: [DONE]\n\n").encode())
            return True
        if self.path in self.server.drip:
            body = json.dumps({"choices": [{"text": " the answer is forty two"}], "data": []}).encode()
            self._drip(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: "
                       + str(len(body)).encode() + b"\r\n\r\n", body)
            return True
        if self.path in self.server.replies:
            self._send(200, self.server.replies[self.path])
            return True
        return False

    def do_GET(self):
        self.server.requests.append((self.path, dict(self.headers)))
        if self._special():
            return
        if self.path == "/v1/models":
            return self._send(200, {"data": [{"id": "fake-7b", "max_model_len": self.server.context}]})
        if self.path == "/props" and self.server.slots is not None:
            return self._send(200, {"total_slots": self.server.slots})
        self._send(404, {"error": {"message": "no such route"}})

    def do_POST(self):
        body = self.body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        self.server.requests.append((self.path, body))
        if self._special():
            return
        if self.server.fail_next > 0:
            self.server.fail_next -= 1
            return self._send(503, {"error": {"message": "loading model"}})
        if self.path == "/tokenize" and self.server.tokenizer:
            return self._send(200, {"tokens": self.server.token_ids(body["content"])})
        if self.path == "/v1/embeddings":
            if not self.server.embeddings:
                status, message = self.server.embeddings_error
                return self._send(status, {"error": {"message": message}})
            return self._send(200, {"data": [{"index": i, "embedding": bag_of_words(t)} for i, t in enumerate(body["input"])][::-1]})
        if self.path == "/v1/completions":
            return self._complete(body)
        if self.path == "/v1/chat/completions":
            return self._chat(body)
        self._send(404, {"error": {"message": "no such route"}})

    def _chat(self, body: dict) -> None:
        """A chat turn streamed as deltas, each token with its log-probability (-0.5)."""
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.end_headers()
        for word in re.findall(r"\s*\S+", self.server.chat_reply):
            event = {"choices": [{"delta": {"content": word},
                                  "logprobs": {"content": [{"token": word, "logprob": -0.5}]}}]}
            self.wfile.write(f"data: {json.dumps(event)}\n\n".encode())
        self.wfile.write(b"data: [DONE]\n\n")

    def _complete(self, body: dict) -> None:
        if "<[" in body.get("grammar", "") and self.server.forced != "ignored":
            return self._forced(body)
        if body.get("grammar") and "<[" not in body["grammar"]:  # obey a choice grammar: pick its first alternative
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


    def _forced(self, body: dict) -> None:
        """A token grammar, answered as llama.cpp's servers stream it: each forced token with its
        log-probability (the model's, or 0.0 where renormalised under the grammar)."""
        fake = self.server
        if fake.forced == "refused":
            return self._send(400, {"error": {"message": "failed to parse grammar"}})
        with fake.lock:
            fake.in_flight += 1
            fake.most_in_flight = max(fake.most_in_flight, fake.in_flight)
        time.sleep(fake.delay)
        with fake.lock:
            fake.in_flight -= 1
        pieces = [fake.pieces[int(i)] for i in re.findall(r"<\[(\d+)\]>", body["grammar"])][:body["max_tokens"]]
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.end_headers()
        for n, piece in enumerate(pieces):
            if n:
                time.sleep(fake.token_delay)
            logprob = 0.0 if fake.forced == "renormalised" else fake.forced_logprobs.get(piece, -1.0)
            if fake.logprobs_format == "content":
                logprobs = {"content": [{"token": piece, "logprob": logprob, "top_logprobs": []}]}
            else:
                logprobs = {"tokens": [piece], "token_logprobs": [logprob], "top_logprobs": [{piece: logprob}]}
            event = {"choices": [{"text": piece, "index": 0, "logprobs": logprobs, "finish_reason": None}]}
            self.wfile.write(f"data: {json.dumps(event)}\n\n".encode())
            self.wfile.flush()
        self.wfile.write(b"data: [DONE]\n\n")


def bag_of_words(text: str, dim: int = 32) -> list[float]:
    vector = np.zeros(dim)
    for word in re.findall(r"[a-z]+", text.lower()):
        vector[zlib.crc32(word.encode()) % dim] += 1.0
    return vector.tolist()


def start_server() -> FakeServer:
    fake = FakeServer()
    thread = threading.Thread(target=fake.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    return fake


def stop_server(fake: FakeServer) -> None:
    fake.released.set()
    fake.shutdown()
    fake.server_close()


@pytest.fixture
def server():
    fake = start_server()
    yield fake
    stop_server(fake)


@pytest.fixture
def other_server():
    """A second server on another port: where a redirect would send a request."""
    fake = start_server()
    yield fake
    stop_server(fake)


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


def test_a_server_serving_a_measured_models_file_steers_as_that_model(server):
    from longqa.models import skill
    from longqa.models.resolve import lazy_generator

    local = lazy_generator()  # the default, by name; asking its skill loads nothing
    decisions = ("outline", "scope", "sufficiency", "router-expand")
    in_process = [skill.weight(local, d) for d in decisions]
    assert not local.is_loaded and in_process[0] == 0.0 < in_process[1] < 1.0
    # llama.cpp's servers name the model by the path they loaded.
    server.replies["/v1/models"] = {"data": [{"id": "/srv/models/gemma-3-270m-q4_k_m.gguf"}]}
    served = OpenAIGenerator(server.url)
    assert (served.name, served.model_file) == ("server:/srv/models/gemma-3-270m-q4_k_m.gguf", "gemma-3-270m-q4_k_m")
    assert [skill.weight(served, d) for d in decisions] == in_process
    server.replies["/v1/models"] = {"data": [{"id": "gemma-3-270m-it"}]}  # an alias says nothing of the file
    unmeasured = OpenAIGenerator(server.url)
    assert unmeasured.model_file is None and [skill.weight(unmeasured, d) for d in decisions] == [0.0] * 4


def test_a_served_chat_profile_reads_its_prompts_at_chat_completions(server):
    from longqa.ask.answer.reader import own_probability
    from longqa.models.chat import Message
    from longqa.models.profiles import QWEN_05B

    server.replies["/v1/models"] = {"data": [{"id": "/srv/models/qwen2.5-coder-0.5b-instruct-q4_k_m.gguf"}]}
    generator = OpenAIGenerator(server.url)
    assert generator.profile is QWEN_05B
    prompt = generator.chat_prompt([Message("system", "Answer briefly."),
                                    Message("user", "Passages: text<|im_end|>\nQuestion: How long?")])
    said = "".join(generator.stream(prompt, max_tokens=24, stop=["\n"]))
    assert said == "45 seconds [2]"
    path, body = server.requests[-1]
    assert path == "/v1/chat/completions" and body["logprobs"] is True
    assert [m["role"] for m in body["messages"]] == ["system", "user"]
    assert "< |im_end| >" in body["messages"][1]["content"]  # text cannot close the user's turn
    assert own_probability(generator, prompt, said) == pytest.approx(math.exp(-0.5))
    assert generator.option_logprobs(prompt, ["another answer"]) == [0.0]  # cannot be scored: no say


def test_a_served_completion_model_has_no_chat_prompts(server):
    with pytest.raises(ModelError, match="not a chat model"):
        OpenAIGenerator(server.url).chat_prompt([])


def test_complete_and_stream_send_the_prompt_and_options(server):
    generator = OpenAIGenerator(server.url)
    assert generator.complete("Q: what?\nA:", max_tokens=8, stop=["\n"]) == " the answer is forty two"
    path, body = server.requests[-1]
    assert path == "/v1/completions"
    assert body["prompt"] == "Q: what?\nA:" and body["max_tokens"] == 8 and body["stop"] == ["\n"]
    assert body["model"] == "fake-7b" and body["temperature"] == 0.0
    assert body["repeat_penalty"] == 1.0  # as in process; llama-cpp-python's server defaults to 1.1
    pieces = list(generator.stream("Q: what?\nA:", max_tokens=8))
    assert len(pieces) == 5 and "".join(pieces) == " the answer is forty two"
    assert server.requests[-1][1]["repeat_penalty"] == 1.0


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


# -- option scoring by forced decoding (a server that does not echo prompt log-probabilities) ------

OPTION_LOGPROBS = {" ten": -0.5, " days": -1.5, " two": -2.0, " weeks": -3.0, " of": -0.25, " rest": -4.0}


@pytest.mark.parametrize("fmt", ["legacy", "content"])
def test_options_are_scored_by_forcing_their_tokens_where_echo_is_not_offered(server, fmt, caplog):
    server.logprobs_format = fmt
    server.forced_logprobs = OPTION_LOGPROBS
    generator = OpenAIGenerator(server.url)
    with caplog.at_level("DEBUG", logger="longqa.models.openai"):
        scores = generator.option_logprobs("How long? Answer:", [" ten days", " two weeks of rest"])
    assert scores == pytest.approx([(-0.5 - 1.5) / 2, (-2.0 - 3.0 - 0.25 - 4.0) / 4])
    assert generator.scoring == "forced" and supports(generator, SCORES_OPTIONS)
    assert [r.getMessage() for r in caplog.records if "forced decoding" in r.getMessage()] != []
    path, body = server.requests[-1]
    assert path == "/v1/completions" and body["prompt"] == "How long? Answer:"
    ids = server.token_ids(" two weeks of rest")
    assert body["grammar"] == "root ::= " + " ".join(f"<[{i}]>" for i in ids) + "\n"
    assert (body["max_tokens"], body["temperature"], body["logprobs"], body["stream"]) == (4, 0.0, 1, True)


def test_forced_scoring_counts_at_most_max_tokens_and_probes_once(server):
    server.forced_logprobs = OPTION_LOGPROBS
    generator = OpenAIGenerator(server.url)
    generator.option_logprobs("How long? Answer:", [" ten days"])
    sent = len(server.requests)
    assert generator.option_logprobs("How long? Answer:", [" two weeks of rest"], max_tokens=2) == [-2.5]
    completions = [body for path, body in server.requests[sent:] if path == "/v1/completions"]
    assert len(completions) == 1 and completions[0]["max_tokens"] == 2  # no second probe


def test_an_option_merging_with_the_prompts_last_token_is_forced_as_read_alone(server):
    generator = OpenAIGenerator(server.url)
    generator.option_logprobs("Total:", ["42"])  # read together, "Total:42" is one piece
    assert server.requests[-1][1]["grammar"] == f"root ::= <[{server.token_ids('42')[0]}]>\n"


@pytest.mark.parametrize("setup", ["renormalised", "ignored", "refused", "no tokenizer", "too slow"])
def test_a_server_that_cannot_be_forced_usefully_scores_options_by_first_tokens(server, setup):
    limit = 1e-9 if setup == "too slow" else None
    if setup == "no tokenizer":
        server.tokenizer = False
    elif setup != "too slow":
        server.forced = setup
    generator = OpenAIGenerator(server.url, max_forced_seconds=limit)
    scores = generator.option_logprobs("Is it? Answer:", [" yes", " no"])
    assert generator.scoring == "first-token" and not supports(generator, SCORES_OPTIONS)
    fallback = OpenAIGenerator(server.url).label_probs("Is it? Answer:", [" yes", " no"])
    assert scores == pytest.approx([math.log(fallback[" yes"]), math.log(fallback[" no"])])


def test_options_are_forced_only_where_they_fit_a_share_of_the_deadline(server):
    server.token_delay = 0.05  # each streamed token comes 50 ms after the last
    server.forced_logprobs = {" one": -1.0, " two": -2.0, " three": -3.0, " four": -4.0}
    many = [" one two three four", " two three four one", " three four one two", " four one two three"] * 2
    hasty = OpenAIGenerator(server.url, client=JsonClient(server.url, deadline=3))  # 0.75 s to force
    assert hasty.option_logprobs("Q:", [" one"]) == [-1.0]  # one option fits
    assert hasty.scoring == "forced" and hasty._forced_seconds == pytest.approx(0.05, abs=0.04)
    assert hasty.forced_seconds([4] * len(many)) > 0.75
    sent = len(server.requests)
    # Eight options of four tokens would not fit: this call is scored by first tokens.
    scores = hasty.option_logprobs("Q:", many)
    assert not any("<[" in body.get("grammar", "") for _, body in server.requests[sent:])
    fallback = hasty.label_probs("Q:", many)
    assert scores == pytest.approx([math.log(max(fallback.get(o, 0.0), 1e-12)) for o in many])
    assert hasty.scoring == "forced" and supports(hasty, SCORES_OPTIONS)  # the next call may force
    patient = OpenAIGenerator(server.url, client=JsonClient(server.url, deadline=300))
    assert patient.option_logprobs("Q:", many[:4]) == [-2.5] * 4


@pytest.mark.parametrize("slots, parallel, most", [(None, "4", 1), (3, "", 1), (3, "2", 2), (3, "8", 3)])
def test_forced_requests_run_side_by_side_as_asked_and_the_servers_slots_allow(server, monkeypatch,
                                                                               slots, parallel, most):
    monkeypatch.setenv("LONGQA_LLM_PARALLEL", parallel)
    server.slots, server.delay = slots, 0.1
    server.forced_logprobs = {" one": -1.0, " two": -2.0, " three": -3.0, " four": -4.0, " five": -5.0,
                              " six": -6.0, " seven": -7.0}
    generator = OpenAIGenerator(server.url)
    options = list(server.forced_logprobs)
    assert generator.option_logprobs("Count:", options) == [-1.0, -2.0, -3.0, -4.0, -5.0, -6.0, -7.0]
    assert server.most_in_flight == most


def test_a_bad_parallel_setting_is_refused_when_the_server_is_opened(server, monkeypatch):
    monkeypatch.setenv("LONGQA_LLM_PARALLEL", "four")  # refused even where echo would serve
    with pytest.raises(ModelError, match=r"^LONGQA_LLM_PARALLEL='four': expected a positive whole number up to 1000000$"):
        OpenAIGenerator(server.url)


def test_forced_tokens_without_log_probabilities_are_a_one_line_error(server):
    generator = OpenAIGenerator(server.url)
    generator.option_logprobs("Q:", [" ten days"])
    assert generator.scoring == "forced"
    server.forced_logprobs = {" two": None}
    with pytest.raises(ModelError, match=r"unexpected answer from completions \(TypeError") as caught:
        generator.option_logprobs("Q:", [" two weeks"])
    assert "\n" not in str(caught.value)


def test_generated_log_probabilities_are_read_from_either_format():
    legacy = {"tokens": [" two", " weeks"], "token_logprobs": [-2.0, -3.0], "text_offset": [2, 6]}
    content = {"content": [{"token": " two", "logprob": -2.0, "bytes": [32, 116, 119, 111]},
                           {"token": " weeks", "logprob": -3.0}]}
    assert generated_logprobs(legacy) == generated_logprobs(content) == [(" two", -2.0), (" weeks", -3.0)]
    assert generated_logprobs(None) == generated_logprobs({}) == []
    for bad in ({"tokens": [" two"], "token_logprobs": []}, {"tokens": [" two"], "token_logprobs": [0.5]},
                {"content": [{"token": " two", "logprob": float("nan")}]}):
        with pytest.raises(ValueError):
            generated_logprobs(bad)


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


def test_cli_with_down_embedding_server_exits_1_with_one_line_and_stores_nothing(tmp_path, monkeypatch, capsys):
    from longqa.cli import main

    doc = tmp_path / "notes.md"
    doc.write_text("# Notes\n\nSome text about cats and their habits.\n")
    store = tmp_path / "store.db"
    url = closed_port_url()
    monkeypatch.setattr("longqa.models.http.BACKOFF_SECONDS", 0.01)
    monkeypatch.setattr(sys, "argv", ["longqa", "ingest", str(doc), "-d", str(store), "--embed-url", url])
    with pytest.raises(SystemExit) as exited:
        main()
    assert exited.value.code == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"longqa: error: cannot reach LLM server at {url}: [Errno 111] Connection refused"]
    from longqa.store import open_db

    assert open_db(store).execute("SELECT COUNT(*) FROM documents").fetchone()[0] == 0


def test_models_command_reports_the_server(server, monkeypatch, capsys):
    from longqa.cli import main

    monkeypatch.setattr(sys, "argv", ["longqa", "models", "--json", "--llm-url", server.url, "--embed-url", server.url])
    with pytest.raises(SystemExit) as exited:
        main()
    assert exited.value.code == 0
    report = json.loads(capsys.readouterr().out)
    assert report["generator"] == {"source": "server", "url": server.url, "name": "server:fake-7b",
                                   "context_length": 64, "gpu_offload": None}
    assert report["embedder"]["source"] == "server" and report["embedder"]["dim"] == 32


# -- a server that misbehaves: redirects, hangs, wrong-shaped or oversized answers ----------------

def test_a_redirect_is_not_followed_and_the_key_goes_nowhere_else(server, other_server, monkeypatch):
    monkeypatch.setenv("LONGQA_LLM_API_KEY", "sk-secret-key")
    server.redirect_to = f"http://127.0.0.1:{other_server.server_address[1]}"
    with pytest.raises(ModelError, match=r"HTTP 302 .* redirects to http://127\.0\.0\.1:\d+/v1/models; "
                                         r"redirects are not followed"):
        OpenAIGenerator(server.url, client=JsonClient(server.url, backoff=0.01))
    assert server.requests[0][1]["Authorization"] == "Bearer sk-secret-key"  # the named server has it
    assert other_server.requests == []


def test_a_hung_server_fails_within_the_deadline_retries_included(server):
    server.hang.add("/v1/completions")
    generator = OpenAIGenerator(server.url, client=JsonClient(server.url, deadline=1.5, backoff=0.01))
    started = time.monotonic()
    with pytest.raises(ModelError, match=r"timed out after 1\.5 s \(deadline 1\.5 s, LONGQA_LLM_TIMEOUT\)") as caught:
        generator.complete("Q: what?\nA:", max_tokens=4)
    assert time.monotonic() - started < 3.0
    assert "\n" not in str(caught.value)


def test_one_question_shares_one_deadline_across_calls(server):
    from longqa.models.http import question_deadline

    server.hang.add("/v1/completions")
    client = JsonClient(server.url, deadline=60, backoff=0.01)
    started = time.monotonic()
    with question_deadline(1.0), pytest.raises(ModelError, match="1 s"):
        client.get("models")  # answered at once
        client.post("completions", {"prompt": "x"})  # waits for what is left of the second
    assert time.monotonic() - started < 2.5


def test_the_deadline_setting_is_checked(monkeypatch):
    from longqa.models.http import deadline_setting

    monkeypatch.setenv("LONGQA_LLM_TIMEOUT", "12.5")
    assert deadline_setting() == 12.5
    monkeypatch.setenv("LONGQA_LLM_TIMEOUT", "soon")
    with pytest.raises(ModelError, match="LONGQA_LLM_TIMEOUT='soon': not a positive number"):
        deadline_setting()


@pytest.mark.parametrize("path, reply", [
    ("/v1/completions", {"choices": [{"text": 5}]}),
    ("/v1/completions", {"choices": "forty two"}),
    ("/v1/completions", [1, 2, 3]),
    ("/v1/embeddings", {"data": [{"embedding": 0.5}]}),
    ("/v1/embeddings", {"data": [{"index": 0, "embedding": []}]}),
    ("/v1/embeddings", {"data": ["x"]}),
])
def test_wrong_shaped_answers_are_one_line_errors(server, path, reply):
    embedder = OpenAIEmbedder(server.url)
    generator = OpenAIGenerator(server.url)
    server.replies[path] = reply
    with pytest.raises(ModelError, match=rf"^LLM server at {re.escape(server.url)}: ") as caught:
        if path.endswith("embeddings"):
            embedder.embed(["one text"])
        else:
            generator.complete("Q:", max_tokens=2)
    assert "\n" not in str(caught.value)


def test_wrong_shaped_logprobs_are_one_line_errors(server):
    server.replies["/v1/completions"] = {"choices": [{"text": " yes", "logprobs": {"top_logprobs": [{" yes": "high"}]}}]}
    with pytest.raises(ModelError, match=r"unexpected answer from completions \(ValueError"):
        OpenAIGenerator(server.url).label_probs("Is it? Answer:", [" yes", " no"])


def test_an_answer_over_the_cap_is_refused(server, monkeypatch):
    monkeypatch.setattr("longqa.models.http.MAX_RESPONSE_BYTES", 4096)
    monkeypatch.setattr("longqa.models.http.READ_CHUNK", 1024)
    server.replies["/v1/completions"] = {"choices": [{"text": "word " * 5000}]}
    with pytest.raises(ModelError, match="answer from completions is over 0 MiB"):
        OpenAIGenerator(server.url).complete("Q:", max_tokens=2)


def ask_with_server(monkeypatch, capsys, tmp_path, server: FakeServer, *extra: str, embedders: list | None = None,
                    url: str | None = None):
    """`longqa ask` over a real store (fake embedder) with the real server generator at `server`
    (named as `url`, where given); `embedders` collects the (embed_model, embed_url) the command
    asked for."""
    from longqa.cli import main
    from longqa.models import resolve
    from tests.ask_support import build_store, reactor_handbook
    from tests.fakes import FakeEmbedder

    db_path = tmp_path / "store.db"
    build_store(db_path, {"handbook.md": reactor_handbook()}, tmp_path)
    server.context = 8192
    asked = embedders if embedders is not None else []
    monkeypatch.setattr(resolve, "load_embedder",
                        lambda embed_model=None, embed_url=None: asked.append((embed_model, embed_url)) or FakeEmbedder())
    monkeypatch.setattr(sys, "argv", ["longqa", "ask", "How fast do the emergency diesel generators start after a grid loss?",
                                      "-d", str(db_path), "--llm-url", url or server.url, *extra])
    started = time.monotonic()
    with pytest.raises(SystemExit) as exited:
        main()
    return exited.value.code, capsys.readouterr(), time.monotonic() - started


def test_ask_against_a_server_that_hangs_mid_question_exits_1_in_one_line(server, monkeypatch, capsys, tmp_path):
    monkeypatch.setenv("LONGQA_LLM_TIMEOUT", "2")
    server.hang.add("/v1/completions")
    code, output, seconds = ask_with_server(monkeypatch, capsys, tmp_path, server)
    assert code == 1 and seconds < 5
    assert output.err.strip().splitlines() == [
        f"longqa: error: cannot reach LLM server at {server.url}: timed out after 2.0 s (deadline 2 s, LONGQA_LLM_TIMEOUT)"]


def test_ask_against_a_server_with_garbage_exits_1_in_one_line(server, monkeypatch, capsys, tmp_path):
    server.replies["/v1/completions"] = {"choices": [{"text": None, "logprobs": "none"}]}
    code, output, _ = ask_with_server(monkeypatch, capsys, tmp_path, server)
    lines = output.err.strip().splitlines()
    assert code == 1 and len(lines) == 1
    assert lines[0].startswith(f"longqa: error: LLM server at {server.url}: ") and "internal error" not in lines[0]


def test_a_generation_server_is_never_asked_for_embeddings(server, monkeypatch, capsys, tmp_path):
    server.embeddings = False
    server.embeddings_error = (500, "Llama model must be created with embedding=True to call this method")
    embedders: list = []
    code, output, _ = ask_with_server(monkeypatch, capsys, tmp_path, server, "--no-stream", embedders=embedders)
    assert code == 0 and output.out.split(" [1]")[0]  # an answer from the store, quoted
    assert embedders == [(None, None)]  # the store's own embedder, not the server
    assert not any(path.endswith("/embeddings") for path, _ in server.requests)
