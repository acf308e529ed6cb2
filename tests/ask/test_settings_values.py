"""A setting's value is checked against what its field declares it takes (a range, a choice), the
same way from `--set`, from a settings file and from the command's own options: a value outside it
is a one-line usage error (exit 2) naming what the setting takes. The settings file itself must be
a regular file of bounded size, and a file nested deeper than settings go is refused, not a crash.
"""

from __future__ import annotations

import json
import math
import os
import resource
import subprocess
import sys
import time

import pytest

from longqa.ask.settings import DEFAULTS, SettingsError
from tests.command import run

QUESTION = "How fast do the emergency diesel generators start?"


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    """A real store of one document (fake vectors): `ask` gets as far as reading its settings."""
    from tests.ask_support import build_store, reactor_handbook

    folder = tmp_path_factory.mktemp("store")
    build_store(folder / "store.db", {"handbook.md": reactor_handbook()}, folder)
    return folder / "store.db"


BAD_VALUES = [
    ("search.doc_relative", "nan", "a number from 0 to 1"),
    ("search.max_docs", "-5", "a whole number from 1 to 1,000,000,000"),
    ("retrieval.k", "-1", "a whole number from 1 to"),
    ("retrieval.k", "100000000000000000000", "a whole number from 1 to"),
    ("search.max_seconds", "-1", "a number from 0 to"),
    ("search.confidence", "nan", "a number from 0 to 1"),
    ("relevance.cosine_min", "inf", "a number from -1 to 1"),
    ("answer.focus_weights", "nan,nan,nan", "3 comma-separated numbers, each from 0 to"),
    ("search.router", "bogus", "one of auto, on, off"),
    ("search.search", "bogus", "one of tree, graph, auto"),
    ("answer.free_text", "bogus", "one of auto, generate, quote"),
]


@pytest.mark.parametrize("key, value, takes", BAD_VALUES)
def test_a_value_outside_what_a_setting_takes_is_refused_naming_it(key, value, takes):
    with pytest.raises(SettingsError, match=f"setting '{key}' takes {takes}"):
        DEFAULTS.with_values({key: value})


def test_values_inside_the_ranges_are_taken():
    changed = DEFAULTS.with_values({"search.doc_relative": "1", "search.max_docs": "1", "retrieval.k": 1,
                                    "search.router": "on", "search.search": "graph", "answer.free_text": "quote",
                                    "relevance.cosine_min": "-0.5", "search.max_seconds": "0"})
    assert (changed.search.router, changed.search.search, changed.relevance.cosine_min) == ("on", "graph", -0.5)


def one_usage_error(result) -> str:
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr and "internal error" not in result.stderr
    return " ".join(lines)


@pytest.mark.parametrize("key, value, takes", [BAD_VALUES[0], BAD_VALUES[1], BAD_VALUES[8], BAD_VALUES[9]])
def test_ask_refuses_a_bad_value_from_set_and_from_a_file_alike(store, tmp_path, key, value, takes):
    message = one_usage_error(run("ask", QUESTION, "--set", f"{key}={value}", db=store))
    assert takes in message and key in message
    section, name = key.split(".")
    number = value if value in ("-5", "-1") else json.dumps(value) if value != "nan" else "nan"
    settings = tmp_path / "settings.toml"
    settings.write_text(f"[{section}]\n{name} = {number}\n", encoding="utf-8")
    message = one_usage_error(run("ask", QUESTION, "--settings", settings, db=store))
    assert takes in message and key in message


def test_a_settings_file_nested_past_any_setting_is_a_usage_error(store, tmp_path):
    arrays = tmp_path / "arrays.toml"
    arrays.write_text("x = " + "[" * 100_000 + "]" * 100_000 + "\n", encoding="utf-8")
    message = one_usage_error(run("ask", QUESTION, "--settings", arrays, db=store))
    assert str(arrays) in message and "nested too deeply" in message
    dotted = tmp_path / "dotted.toml"
    dotted.write_text(".".join(f"k{n}" for n in range(5_000)) + " = 1\n", encoding="utf-8")
    message = one_usage_error(run("ask", QUESTION, "--settings", dotted, db=store))
    assert "unknown setting 'k0.k1.k2" in message and len(message) < 400


def _limited_memory():
    """The child may not grow past 3 GiB: a settings file read without end fails fast, not the host."""
    resource.setrlimit(resource.RLIMIT_AS, (3 << 30, 3 << 30))


def run_limited(*args, db, env: dict, timeout: float):
    """`longqa` as tests/command.py runs it, in at most 3 GiB of memory and `timeout` seconds."""
    argv = [sys.executable, "-m", "longqa", *map(str, args), "-d", str(db)]
    full_env = {key: value for key, value in {**os.environ, **env}.items() if key != "LONGQA_DEBUG"}
    return subprocess.run(argv, capture_output=True, text=True, env=full_env, timeout=timeout,
                          preexec_fn=_limited_memory)


@pytest.mark.parametrize("kind", ["fifo", "device", "folder", "huge"])
def test_a_settings_file_that_is_no_regular_file_is_refused_at_once(store, tmp_path, kind):
    if kind == "fifo":
        path = tmp_path / "settings.fifo"
        os.mkfifo(path)
    elif kind == "device":
        path = "/dev/zero"
    elif kind == "folder":
        path = tmp_path
    else:
        path = tmp_path / "huge.toml"
        with open(path, "wb") as handle:
            handle.truncate(64 << 20)  # sparse: no disk used
    started = time.monotonic()
    result = run_limited("ask", QUESTION, db=store, env={"LONGQA_SETTINGS": str(path)}, timeout=20)
    message = one_usage_error(result)
    assert time.monotonic() - started < 15  # the command's start-up; the file itself costs nothing
    assert str(path) in message
    assert {"fifo": "named pipe", "device": "a device", "folder": "a folder", "huge": "over the 1.0 MiB"}[kind] in message


def test_json_output_never_holds_nan_or_infinity(capsys):
    from longqa.cli.app import print_json

    print_json({"answer": "x", "scores": [0.5, math.nan, -math.inf], "probability": math.inf})
    captured = capsys.readouterr()

    def refuse(name):
        raise ValueError(f"{name} is not JSON")

    assert json.loads(captured.out, parse_constant=refuse) == {"answer": "x", "scores": [0.5, None, None],
                                                               "probability": None}
    assert captured.err.splitlines() == [
        "longqa: warning: numbers that are not finite written as null: scores[1], scores[2], probability"]


def test_every_default_is_a_value_its_setting_takes():
    from dataclasses import fields

    from longqa.ask.settings import RETRIEVAL_ALLOWED, allowed

    assert set(RETRIEVAL_ALLOWED) <= {item.name for item in fields(DEFAULTS.retrieval)}
    wrong = [f"{part.name}.{item.name}" for part in fields(DEFAULTS) for section in [getattr(DEFAULTS, part.name)]
             for item in fields(section) if allowed(section, item.name).problem(getattr(section, item.name))]
    assert wrong == []
