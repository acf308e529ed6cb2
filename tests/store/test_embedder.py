"""`ask` uses the embedder the store was built with: another one is refused in one line."""

from __future__ import annotations

import sys

import pytest

from longqa.models import resolve
from tests.fakes import FakeEmbedder


def test_ask_with_another_embedder_than_the_stores_is_one_line_naming_both(store, monkeypatch, capsys):
    from longqa.cli import main

    monkeypatch.setattr(resolve, "load_embedder", lambda embed_model=None, embed_url=None: FakeEmbedder(name="other-model"))
    monkeypatch.setattr(sys, "argv", ["longqa", "ask", "How fast do the emergency diesel generators start?",
                                      "-d", str(store)])
    with pytest.raises(SystemExit) as exited:
        main()
    lines = capsys.readouterr().err.strip().splitlines()
    assert exited.value.code == 1 and len(lines) == 1
    assert "embedded with fake-bow-256" in lines[0] and "embedder in use is other-model" in lines[0]
    assert "`longqa reindex`" in lines[0]
