"""A small JSON-over-HTTP client for OpenAI-compatible servers (stdlib http.client only).

- Only the URL the user named is contacted: a redirect is an error, never followed, so a server
  cannot send the request (and the API key with it) to another host or port.
- One deadline bounds all the calls of one question (`question_deadline`; $LONGQA_LLM_TIMEOUT
  seconds): every connect and read waits at most what is left of it, and retries of connection
  errors and 5xx answers (exponential back-off) happen only inside it. A hung server therefore
  costs at most the deadline, then one line. Outside a question each call has its own deadline.
  The deadline holds per read, not per piece of the answer: each read of the socket waits at
  most what is left of it (`_TimedReader`), so a server that sends a byte at a time is cut off at
  the deadline too, and the message says how long it really took.
- Answers are capped (MAX_RESPONSE_BYTES, MAX_EVENT_BYTES): a runaway server cannot fill memory.
- Credentials in a URL (`http://user:password@host/v1`) are never printed, logged or reported:
  `redact_url` is the one place that shows a URL, and the client's `base` has none. They are sent
  as HTTP basic auth to that server only (the only one contacted), in place of $LONGQA_LLM_API_KEY.

Every failure becomes a one-line ModelError naming the server.
"""

from __future__ import annotations

import base64
import contextlib
import functools
import http.client
import io
import json
import re
import socket
import time
import urllib.parse
from typing import Iterator

from longqa import environment
from longqa.errors import ModelError
from longqa.names import valid_json

RETRYABLE_STATUS = {429, 500, 502, 503, 504}
BACKOFF_SECONDS = 0.5  # first wait; doubles on each retry (0.5, 1, 2 s with 3 retries)
# Whole-question bound on server calls. A 270M model answers a question in seconds on a laptop
# and a larger served model in tens of seconds; longer than this is a hung or overloaded server.
DEFAULT_DEADLINE_SECONDS = 30.0
# An embeddings answer for 64 texts of a 4,096-dimensional model is about 5 MB of JSON.
MAX_RESPONSE_BYTES = 32 << 20
MAX_EVENT_BYTES = 1 << 20  # one server-sent event (a few tokens of text and their logprobs)
READ_CHUNK = 1 << 16
# A URL's user name and password: what precedes the last @ of its authority (scheme optional).
_USERINFO = re.compile(r"^(\s*(?:[A-Za-z][A-Za-z0-9+.-]*:)?//)?[^/?#]*@")


class HttpStatusError(ModelError):
    def __init__(self, message: str, status: int):
        super().__init__(message)
        self.status = status


def redact_url(url: str) -> str:
    """The URL as it may be shown: any user name and password in it replaced by `***`."""
    return _USERINFO.sub(r"\1***@", url)


def api_base(url: str, option: str = "--llm-url") -> str:
    """`http://host:8080` → `http://host:8080/v1`; a URL with a path is used as given. Any
    credentials are left out (`url_credentials` reads them)."""
    try:
        parts = urllib.parse.urlsplit(url.strip())
        ok = parts.scheme in ("http", "https") and bool(parts.netloc) and parts.hostname is not None
        parts.port  # noqa: B018 -- a port that is not a number raises here
    except ValueError:
        ok = False
    if not ok:
        raise ModelError(f"{redact_url(url)}: not an http(s) URL for {option}")
    path = parts.path.rstrip("/") or "/v1"
    return urllib.parse.urlunsplit((parts.scheme, parts.netloc.rpartition("@")[2], path, "", ""))


def url_credentials(url: str) -> str | None:
    """The `Authorization` header value for a URL that names a user (basic auth), else None."""
    parts = urllib.parse.urlsplit(url.strip())
    if "@" not in parts.netloc:
        return None
    user = urllib.parse.unquote(parts.username or "")
    password = urllib.parse.unquote(parts.password or "")
    return "Basic " + base64.b64encode(f"{user}:{password}".encode("utf-8")).decode("ascii")


def deadline_setting() -> float:
    """$LONGQA_LLM_TIMEOUT in seconds (a positive number), else the default."""
    value = environment.llm_timeout()
    return DEFAULT_DEADLINE_SECONDS if value is None else value


# (ends_at on the monotonic clock, seconds) of the question being answered, if one is open.
_question: tuple[float, float] | None = None


@contextlib.contextmanager
def question_deadline(seconds: float | None = None):
    """One deadline for every server call made inside (all of one question's calls). Outside any
    question, each call (with its retries) has a deadline of its own."""
    global _question
    seconds = deadline_setting() if seconds is None else seconds
    previous, _question = _question, (time.monotonic() + seconds, seconds)
    try:
        yield
    finally:
        _question = previous


class JsonClient:
    def __init__(self, base_url: str, *, deadline: float | None = None, retries: int = 3,
                 backoff: float | None = None, option: str = "--llm-url"):
        self.base = api_base(base_url, option)  # without credentials: it is what messages show
        self.deadline = deadline_setting() if deadline is None else deadline
        self.retries = retries
        self.backoff = BACKOFF_SECONDS if backoff is None else backoff
        self.api_key = environment.LLM_API_KEY.value()
        self._basic_auth = url_credentials(base_url)  # sent to this server only, never shown

    def _deadline(self) -> "_Deadline":
        if _question is not None:
            return _Deadline(*_question)
        return _Deadline(time.monotonic() + self.deadline, self.deadline)

    def _time_left(self, deadline: "_Deadline", what: str) -> float:
        left = deadline.ends_at - time.monotonic()
        if left <= 0:
            raise ModelError(f"LLM server at {self.base}: no answer from {what} in time: "
                             f"{deadline.expired()}")
        return left

    def url(self, path: str) -> str:
        return self.base + "/" + path.lstrip("/")

    def root_url(self, path: str) -> str:
        """A path at the server's root (llama-server's /tokenize lives outside /v1)."""
        parts = urllib.parse.urlsplit(self.base)
        return urllib.parse.urlunsplit((parts.scheme, parts.netloc, "/" + path.lstrip("/"), "", ""))

    def get(self, path: str, *, absolute: str | None = None) -> dict:
        deadline = self._deadline()
        with self._open(absolute or self.url(path), None, deadline) as answer:
            return self._json(answer, path, deadline)

    def post(self, path: str, payload: dict, *, absolute: str | None = None, retries: int | None = None) -> dict:
        """`retries=0`: a trial request whose failure the caller handles (nothing is retried)."""
        deadline = self._deadline()
        with self._open(absolute or self.url(path), payload, deadline, retries) as answer:
            return self._json(answer, path, deadline)

    def stream(self, path: str, payload: dict, *, retries: int | None = None) -> Iterator[dict]:
        """Server-sent events: one decoded JSON object per `data:` line, until `[DONE]`."""
        deadline = self._deadline()
        with self._open(self.url(path), payload, deadline, retries) as answer:
            try:
                while True:
                    self._time_left(deadline, path)
                    raw = answer.readline(MAX_EVENT_BYTES + 1)
                    if not raw:
                        raise ModelError(f"LLM server at {self.base}: stream from {path} ended without [DONE]")
                    if len(raw) > MAX_EVENT_BYTES:
                        raise ModelError(f"LLM server at {self.base}: stream event from {path} over "
                                         f"{MAX_EVENT_BYTES >> 20} MiB")
                    line = raw.decode("utf-8", errors="replace").strip()
                    if not line.startswith("data:"):
                        continue
                    data = line[5:].strip()
                    if data == "[DONE]":
                        return
                    try:
                        event = valid_json(json.loads(data))  # "\udcc2" escapes: no lone surrogate passes
                    except ValueError:
                        raise ModelError(f"LLM server at {self.base}: malformed stream event from {path}") from None
                    if not isinstance(event, dict):
                        raise ModelError(f"LLM server at {self.base}: stream event from {path} is not an object")
                    yield event
            except (OSError, http.client.HTTPException) as exc:
                raise ModelError(f"LLM server at {self.base}: stream from {path} broke off "
                                 f"({_reason(exc, deadline)})") from None

    def _json(self, answer: http.client.HTTPResponse, path: str, deadline: "_Deadline") -> dict:
        body = bytearray()
        try:
            while True:
                self._time_left(deadline, path)
                chunk = answer.read(READ_CHUNK)
                if not chunk:
                    break
                body += chunk
                if len(body) > MAX_RESPONSE_BYTES:
                    raise ModelError(f"LLM server at {self.base}: answer from {path} is over "
                                     f"{MAX_RESPONSE_BYTES >> 20} MiB")
            answer = valid_json(json.loads(body.decode("utf-8")))
        except (socket.timeout, TimeoutError):
            raise ModelError(f"LLM server at {self.base}: no answer from {path} in time: {deadline.expired()}") from None
        except (ValueError, OSError, http.client.HTTPException) as exc:
            raise ModelError(f"LLM server at {self.base}: bad JSON from {path} ({_reason(exc, deadline)})") from None
        if not isinstance(answer, dict):
            raise ModelError(f"LLM server at {self.base}: answer from {path} is not a JSON object")
        return answer

    @contextlib.contextmanager
    def _open(self, url: str, payload: dict | None, deadline: "_Deadline", retries: int | None = None):
        headers = {"Accept": "application/json"}
        data = None
        if payload is not None:
            data = json.dumps(payload).encode("utf-8")
            headers["Content-Type"] = "application/json"
        if self._basic_auth:
            headers["Authorization"] = self._basic_auth
        elif self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        attempt = 0
        while True:
            connection = _connection(url, self._time_left(deadline, url), deadline)
            try:
                answer = self._request(connection, url, data, headers)
            except HttpStatusError as exc:
                connection.close()
                if exc.status not in RETRYABLE_STATUS or not self._may_retry(attempt, deadline, retries):
                    raise
            except (OSError, http.client.HTTPException) as exc:
                connection.close()
                if not self._may_retry(attempt, deadline, retries):
                    raise ModelError(f"cannot reach LLM server at {self.base}: {_reason(exc, deadline)}") from None
            except BaseException:  # a refused redirect, an interrupt: nothing to retry
                connection.close()
                raise
            else:
                try:
                    yield answer
                finally:
                    connection.close()
                return
            time.sleep(self.backoff * (2 ** attempt))
            attempt += 1

    def _may_retry(self, attempt: int, deadline: "_Deadline", retries: int | None = None) -> bool:
        """Another try is allowed while retries remain and its back-off ends inside the deadline."""
        return attempt < (self.retries if retries is None else retries) and deadline.ends_at - time.monotonic() > self.backoff * (2 ** attempt)

    def _request(self, connection: http.client.HTTPConnection, url: str, data: bytes | None,
                 headers: dict) -> http.client.HTTPResponse:
        parts = urllib.parse.urlsplit(url)
        target = parts.path + (f"?{parts.query}" if parts.query else "")
        connection.request("POST" if data is not None else "GET", target, body=data, headers=headers)
        response = connection.getresponse()
        if 300 <= response.status < 400:
            # Not an HttpStatusError: callers that take a 4xx as "not offered" must not take this.
            location = response.getheader("Location", "")
            raise ModelError(f"LLM server at {self.base}: HTTP {response.status} from {url} redirects to "
                             f"{redact_url(location)[:200] or 'nowhere'}; redirects are not followed (name the final URL)")
        if response.status >= 400:
            detail = _error_detail(response)
            raise HttpStatusError(f"LLM server at {self.base}: HTTP {response.status} from {url}{detail}",
                                  response.status)
        return response


class _Deadline:
    def __init__(self, ends_at: float, seconds: float):
        self.ends_at, self.seconds = ends_at, seconds

    def expired(self) -> str:
        """What a message says once the time is up: how long it really took, and the limit."""
        elapsed = time.monotonic() - (self.ends_at - self.seconds)
        return f"timed out after {elapsed:.1f} s (deadline {self.seconds:g} s, LONGQA_LLM_TIMEOUT)"


class _TimedReader(io.RawIOBase):
    """A response's socket reads, each waiting at most what is left of the deadline: a timeout
    per read alone lets a server that sends a byte at a time run on for as long as it likes."""

    def __init__(self, raw: io.RawIOBase, sock: socket.socket, deadline: _Deadline):
        super().__init__()
        self._raw, self._socket, self._deadline = raw, sock, deadline

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int | None:
        left = self._deadline.ends_at - time.monotonic()
        if left <= 0:
            raise TimeoutError("deadline reached")
        self._socket.settimeout(left)
        return self._raw.readinto(buffer)

    def close(self) -> None:
        self._raw.close()  # lets go of the socket, as the response's own reader would
        super().close()


class _TimedResponse(http.client.HTTPResponse):
    """An HTTP response whose every read, headers included, ends by the deadline."""

    def __init__(self, sock: socket.socket, *args, deadline: _Deadline, **kwargs):
        super().__init__(sock, *args, **kwargs)
        self.fp = io.BufferedReader(_TimedReader(self.fp.detach(), sock, deadline))


def _connection(url: str, timeout: float, deadline: _Deadline) -> http.client.HTTPConnection:
    parts = urllib.parse.urlsplit(url)
    kind = http.client.HTTPSConnection if parts.scheme == "https" else http.client.HTTPConnection
    connection = kind(parts.hostname, parts.port, timeout=timeout)
    connection.response_class = functools.partial(_TimedResponse, deadline=deadline)
    return connection


def _reason(exc: BaseException, deadline: _Deadline) -> str:
    if isinstance(exc, (socket.timeout, TimeoutError)):
        return deadline.expired()
    if isinstance(exc, ModelError):
        return str(exc)
    return " ".join(str(getattr(exc, "reason", None) or exc or type(exc).__name__).split())


def _error_detail(response: http.client.HTTPResponse) -> str:
    try:
        body = response.read(MAX_EVENT_BYTES).decode("utf-8", errors="replace")
        message = json.loads(body).get("error", body)
        if isinstance(message, dict):
            message = message.get("message", "")
    except (ValueError, OSError, AttributeError, http.client.HTTPException):
        return ""
    message = " ".join(str(message).split())[:200]
    return f": {message}" if message else ""
