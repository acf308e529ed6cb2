"""A small JSON-over-HTTP client for OpenAI-compatible servers (stdlib urllib only).

Connection errors and 5xx answers are retried with exponential backoff, a bounded number of
times; anything else fails at once. Every failure becomes a one-line ModelError naming the URL.
Only the URL the user named is ever contacted.
"""

from __future__ import annotations

import json
import os
import socket
import time
import urllib.error
import urllib.parse
import urllib.request
from typing import Iterator

from longqa.errors import ModelError

RETRYABLE_STATUS = {429, 500, 502, 503, 504}
BACKOFF_SECONDS = 0.5  # first wait; doubles on each retry (0.5, 1, 2 s with 3 retries)


class HttpStatusError(ModelError):
    def __init__(self, message: str, status: int):
        super().__init__(message)
        self.status = status


def api_base(url: str) -> str:
    """`http://host:8080` → `http://host:8080/v1`; a URL with a path is used as given."""
    parts = urllib.parse.urlsplit(url.strip())
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise ModelError(f"{url}: not an http(s) URL for --llm-url")
    path = parts.path.rstrip("/") or "/v1"
    return urllib.parse.urlunsplit((parts.scheme, parts.netloc, path, "", ""))


class JsonClient:
    def __init__(self, base_url: str, *, timeout: float = 120.0, retries: int = 3, backoff: float | None = None):
        self.base = api_base(base_url)
        self.timeout, self.retries = timeout, retries
        self.backoff = BACKOFF_SECONDS if backoff is None else backoff
        self.api_key = os.environ.get("LONGQA_LLM_API_KEY", "")

    def url(self, path: str) -> str:
        return self.base + "/" + path.lstrip("/")

    def root_url(self, path: str) -> str:
        """A path at the server's root (llama-server's /tokenize lives outside /v1)."""
        parts = urllib.parse.urlsplit(self.base)
        return urllib.parse.urlunsplit((parts.scheme, parts.netloc, "/" + path.lstrip("/"), "", ""))

    def get(self, path: str) -> dict:
        with self._open(self.url(path), None) as response:
            return self._json(response, path)

    def post(self, path: str, payload: dict, *, absolute: str | None = None) -> dict:
        with self._open(absolute or self.url(path), payload) as response:
            return self._json(response, path)

    def stream(self, path: str, payload: dict) -> Iterator[dict]:
        """Server-sent events: one decoded JSON object per `data:` line, until `[DONE]`."""
        with self._open(self.url(path), payload) as response:
            try:
                for raw in response:
                    line = raw.decode("utf-8", errors="replace").strip()
                    if not line.startswith("data:"):
                        continue
                    data = line[5:].strip()
                    if data == "[DONE]":
                        return
                    try:
                        yield json.loads(data)
                    except ValueError:
                        raise ModelError(f"LLM server at {self.base}: malformed stream event from {path}") from None
            except (OSError, socket.timeout) as exc:
                raise ModelError(f"LLM server at {self.base}: stream from {path} broke off ({exc})") from None

    def _json(self, response, path: str) -> dict:
        try:
            return json.loads(response.read().decode("utf-8"))
        except (ValueError, OSError) as exc:
            raise ModelError(f"LLM server at {self.base}: bad JSON from {path} ({exc})") from None

    def _open(self, url: str, payload: dict | None):
        headers = {"Accept": "application/json"}
        data = None
        if payload is not None:
            data = json.dumps(payload).encode("utf-8")
            headers["Content-Type"] = "application/json"
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        attempt = 0
        while True:
            request = urllib.request.Request(url, data=data, headers=headers, method="POST" if data else "GET")
            try:
                return urllib.request.urlopen(request, timeout=self.timeout)
            except urllib.error.HTTPError as exc:
                detail = _error_detail(exc)
                if exc.code not in RETRYABLE_STATUS or attempt >= self.retries:
                    raise HttpStatusError(f"LLM server at {self.base}: HTTP {exc.code} from {url}{detail}", exc.code) from None
            except (urllib.error.URLError, OSError, socket.timeout) as exc:
                if attempt >= self.retries:
                    reason = getattr(exc, "reason", exc)
                    raise ModelError(f"cannot reach LLM server at {self.base}: {reason}") from None
            time.sleep(self.backoff * (2 ** attempt))
            attempt += 1


def _error_detail(exc: urllib.error.HTTPError) -> str:
    try:
        body = exc.read().decode("utf-8", errors="replace")
        message = json.loads(body).get("error", body)
        if isinstance(message, dict):
            message = message.get("message", "")
    except (ValueError, OSError, AttributeError):
        return ""
    message = " ".join(str(message).split())[:200]
    return f": {message}" if message else ""
