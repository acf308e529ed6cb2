"""A user name and password in `--llm-url` / `--embed-url` are sent to that server as basic auth and
never printed: not in an error, not on stdout, not in `--json` (one redactor, longqa/models/http.py)."""

from __future__ import annotations

import base64
import json
import sys

import pytest

from longqa.errors import ModelError
from longqa.models import http
from longqa.models.http import JsonClient, api_base
from tests.models.test_openai import ask_with_server, closed_port_url, server  # noqa: F401 -- the fixture

SECRET = "s3cret"


def with_credentials(url: str) -> str:
    return url.replace("http://", f"http://reader:{SECRET}@", 1)


def test_a_url_is_shown_without_its_credentials():
    redact = http.redact_url
    assert redact("http://reader:s3cret@127.0.0.1:9/v1") == "http://***@127.0.0.1:9/v1"
    assert redact("https://token@example.org") == "https://***@example.org"
    assert redact("reader:s3cret@host:80/v1") == "***@host:80/v1"
    assert redact("http://127.0.0.1:9/v1?q=a@b") == "http://127.0.0.1:9/v1?q=a@b"  # no user: as given
    assert api_base("http://reader:s3cret@127.0.0.1:9") == "http://127.0.0.1:9/v1"


def test_credentials_go_to_the_named_server_as_basic_auth(server, monkeypatch):  # noqa: F811
    monkeypatch.setenv("LONGQA_LLM_API_KEY", "sk-other")
    client = JsonClient(with_credentials(server.url))
    client.get("models")
    client.post("tokenize", {"content": "a b"}, absolute=client.root_url("tokenize"))
    expected = "Basic " + base64.b64encode(f"reader:{SECRET}".encode()).decode()
    assert [headers.get("Authorization") for _, headers in server.requests[:1]] == [expected]
    assert client.base == server.url


@pytest.mark.parametrize("url", [with_credentials(closed_port_url()),
                                 f"http://reader:{SECRET}@127.0.0.1:port/v1", f"ftp://reader:{SECRET}@host/v1"])
def test_an_error_about_a_url_with_credentials_does_not_show_them(url, monkeypatch):
    monkeypatch.setattr("longqa.models.http.BACKOFF_SECONDS", 0.01)
    with pytest.raises(ModelError) as caught:
        JsonClient(url).get("models")
    assert SECRET not in str(caught.value) and "reader" not in str(caught.value)


def run_main(monkeypatch, capsys, *argv: str):
    from longqa.cli import main

    monkeypatch.setattr("longqa.models.http.BACKOFF_SECONDS", 0.01)
    monkeypatch.setattr(sys, "argv", ["longqa", *argv])
    with pytest.raises(SystemExit) as exited:
        main()
    return exited.value.code, capsys.readouterr()


def test_models_reports_a_server_without_its_credentials(server, monkeypatch, capsys):  # noqa: F811
    url = with_credentials(server.url)
    code, output = run_main(monkeypatch, capsys, "models", "--json", "--llm-url", url, "--embed-url", url)
    assert code == 0 and SECRET not in output.out + output.err
    report = json.loads(output.out)
    assert report["generator"]["url"] == report["embedder"]["url"] == server.url
    code, output = run_main(monkeypatch, capsys, "models", "--llm-url", url)
    assert code == 0 and SECRET not in output.out + output.err


def test_models_with_a_down_server_does_not_show_its_credentials(monkeypatch, capsys):
    url = with_credentials(closed_port_url())
    for option in ("--llm-url", "--embed-url"):
        code, output = run_main(monkeypatch, capsys, "models", option, url)
        assert code == 1 and output.err.startswith("longqa: error: cannot reach LLM server at http://127.0.0.1:")
        assert SECRET not in output.out + output.err


def test_ask_does_not_show_the_credentials(server, monkeypatch, capsys, tmp_path):  # noqa: F811
    url = with_credentials(server.url)
    code, output, _ = ask_with_server(monkeypatch, capsys, tmp_path, server, "--json", "--no-stream", url=url)
    assert code == 0 and SECRET not in output.out + output.err
    server.replies["/v1/completions"] = {"choices": "garbage"}
    code, output, _ = ask_with_server(monkeypatch, capsys, tmp_path / "again", server, url=url)
    assert code == 1 and output.err.startswith(f"longqa: error: LLM server at {server.url}: ")
    assert SECRET not in output.out + output.err
