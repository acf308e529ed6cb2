"""Hostile questions: any bytes in (argv or stdin) give valid UTF-8 JSON out, an over-long question
is cut to what the models can read with a warning, and usage errors are one line."""

import io
import json
import os
import subprocess
import sys

import pytest

from longqa.cli import main
from longqa.config import QUESTION_MAX_TOKENS
from longqa import tokens
from tests.ask_support import reactor_handbook

QUESTION = "How fast do the emergency diesel generators start after a grid loss?"
NOT_UTF8 = b"emergency diesel \xff\xfe\xc3( generators \xed\xa0\x80 start?"  # bad lead byte, cut sequence, a surrogate
EMOJI = "\U0001f600" * 10_000


def longqa(monkeypatch, capsysbinary, *args, stdin: bytes | None = None):
    """The real entry point in-process; stdin and stdout are byte streams, as in a shell."""
    monkeypatch.setattr(sys, "argv", ["longqa", *args])
    if stdin is not None:
        monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(stdin), encoding="utf-8"))
    with pytest.raises(SystemExit) as exited:
        main()
    captured = capsysbinary.readouterr()
    return exited.value.code, captured.out, captured.err.decode("utf-8")


@pytest.mark.parametrize("retrieval", ["bm25", "hybrid"])
def test_undecodable_bytes_on_stdin_give_valid_json(store, monkeypatch, capsysbinary, retrieval):
    code, out, err = longqa(monkeypatch, capsysbinary, "ask", "-", "--json", "--retrieval", retrieval,
                            "-d", str(store), stdin=NOT_UTF8)
    assert code == 0, err
    data = json.loads(out.decode("utf-8"))  # strict UTF-8
    assert data["question"].startswith("emergency diesel \ufffd") and "generators" in data["question"]
    assert data["context"] and "Traceback" not in err


def test_undecodable_bytes_in_argv_give_valid_json(store):
    question = os.fsdecode(NOT_UTF8)  # how Python hands such argv bytes over
    argv = [sys.executable, "-m", "longqa", "ask", question, "--retrieval", "bm25", "--context-only",
            "--no-analysis", "--json", "-d", str(store)]
    result = subprocess.run(argv, capture_output=True)
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout.decode("utf-8"))
    assert "\ufffd" in data["question"] and data["context"]


def test_a_question_too_long_for_the_models_is_cut_with_a_warning(store, monkeypatch, capsysbinary):
    long_question = QUESTION + " " + EMOJI
    code, out, err = longqa(monkeypatch, capsysbinary, "ask", long_question, "--json", "-d", str(store))
    assert code == 0
    data = json.loads(out.decode("utf-8"))
    assert data["question"].startswith(QUESTION) and tokens.count(data["question"]) <= QUESTION_MAX_TOKENS
    total = tokens.count(long_question)
    assert err.splitlines()[0] == (
        f"longqa: warning: the question was cut to its first {QUESTION_MAX_TOKENS} tokens (it had {total:,} tokens): "
        "that is what the models can read"
    )
    # Pasted megabytes on stdin: read up to the byte limit, cut, still answered.
    code, out, err = longqa(monkeypatch, capsysbinary, "ask", "-", "--json", "-d", str(store),
                            stdin=(QUESTION + " ").encode() + b"word " * 400_000)
    assert code == 0 and "the question was cut" in err
    assert tokens.count(json.loads(out)["question"]) <= QUESTION_MAX_TOKENS


def test_control_characters_and_nul_bytes_are_blanked(store, monkeypatch, capsysbinary):
    code, out, err = longqa(monkeypatch, capsysbinary, "ask", "-", "--json", "--retrieval", "bm25", "-d", str(store),
                            stdin="\x1bemergency\x00diesel\x07generators\u009bstart?".encode())
    assert code == 0, err
    assert json.loads(out)["question"] == "emergency diesel generators start?"


def test_usage_errors_are_one_line(store, monkeypatch, capsysbinary):
    cases = [
        (["ask"], "longqa: usage: Missing argument 'question'. (see `longqa ask --help`)"),
        (["ask", "   ", "-d", str(store)], "longqa: usage: Invalid value for QUESTION: the question is empty (see `longqa ask --help`)"),
        (["ask", QUESTION, "--retrieval", "fast"],
         "longqa: usage: Invalid value for --retrieval: choose from hybrid, bm25, dense (see `longqa ask --help`)"),
        (["ask", "-why is the sky blue?"],
         "longqa: usage: No such option: -w (a question that starts with '-' goes after `--`: "
         "longqa ask -- \"-question\"; see `longqa ask --help`)"),
        (["ingest"], "longqa: usage: Missing argument 'paths'. (see `longqa ingest --help`)"),
        (["frobnicate"], "longqa: usage: No such command 'frobnicate'. (see `longqa --help`)"),
    ]
    for args, line in cases:
        code, out, err = longqa(monkeypatch, capsysbinary, *args)
        assert (code, out, err.splitlines()) == (2, b"", [line]), args


def test_a_question_starting_with_a_dash_after_double_dash(store, monkeypatch, capsysbinary):
    code, out, err = longqa(monkeypatch, capsysbinary, "ask", "--json", "-d", str(store), "--",
                            "-how fast do the emergency diesel generators start?")
    assert code == 0, err
    assert json.loads(out)["question"] == "-how fast do the emergency diesel generators start?"


@pytest.mark.models
def test_real_models_read_the_cut_question(tmp_path, db_path):
    """With the default gemma and MiniLM, a 10,000-emoji question is cut and answered from
    context (exit 0 or 4), not refused for overflowing the 8,192-token window (exit 1)."""
    doc = tmp_path / "handbook.md"
    doc.write_text(reactor_handbook())
    argv = [sys.executable, "-m", "longqa"]
    assert subprocess.run([*argv, "ingest", str(doc), "-d", str(db_path)], capture_output=True).returncode == 0
    result = subprocess.run([*argv, "ask", QUESTION + " " + EMOJI, "--context-only", "--json", "-d", str(db_path)],
                            capture_output=True, timeout=600)
    assert result.returncode in (0, 4), result.stderr
    assert b"the question was cut" in result.stderr and b"Traceback" not in result.stderr
    json.loads(result.stdout.decode("utf-8"))
