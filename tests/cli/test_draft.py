"""The reader's draft on a real terminal (a pty): wiped whole however many rows it wrapped onto,
and a server's reply, lone surrogates and all, never drives the terminal nor ends the ask."""

from __future__ import annotations

import fcntl
import io
import os
import pty
import re
import struct
import sys
import termios

import pytest
from rich.cells import get_character_cell_size

from longqa.cli.draft import Draft, rows_below_first
from longqa.models.profiles import QWEN_05B
from tests.command import drained, drained_bytes
from tests.models.test_openai import ask_with_server, server  # noqa: F401 -- the fixture


def terminal(columns: int):
    """A pseudo-terminal `columns` wide: (its controller fd, a text stream on its other side)."""
    controller, follower = pty.openpty()
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 24, columns, 0, 0))
    stream = io.TextIOWrapper(os.fdopen(follower, "wb"), encoding="utf-8", errors="surrogateescape",
                              write_through=True)
    return controller, stream


def screen(received: str, columns: int) -> list[str]:
    """The rows a terminal `columns` wide shows after `received` (text, \\r, \\n, and the CSI
    sequences the draft uses: m, A, J, K), as xterm lays them out: a character that does not fit
    goes to the next row; a full row keeps the cursor on it until the next character."""
    cells: dict[tuple[int, int], str] = {}
    row = column = 0
    at = 0
    while at < len(received):
        char = received[at]
        if char == "\x1b":
            sequence = re.match(r"\x1b\[(\d*)([A-Za-z])", received[at:])
            assert sequence, repr(received[at:at + 8])
            count, command = int(sequence.group(1) or 1), sequence.group(2)
            column = min(column, columns - 1)
            if command == "A":
                row = max(0, row - count)
            elif command in "JK":
                for key in [k for k in cells if (k[0] == row and k[1] >= column) or (command == "J" and k[0] > row)]:
                    del cells[key]
            at += sequence.end()
            continue
        if char == "\r":
            column = 0
        elif char == "\n":
            row += 1
        else:
            width = get_character_cell_size(char)
            if column + width > columns:
                row, column = row + 1, 0
            cells[(row, column)] = char
            column += width
        at += 1
    last = max((k[0] for k in cells), default=-1)
    return ["".join(cells.get((r, c), " ") for c in range(columns)).rstrip() for r in range(last + 1)]


@pytest.mark.parametrize("columns", [20, 60, 80])
def test_a_draft_that_wraps_is_wiped_whole_and_nothing_above_it(columns):
    controller, stream = terminal(columns)
    stream.write("a line before\n")
    draft = Draft(stream)
    reply = "The standby generators ran for 31 hours in total during two grid failures in January [12]"
    for word in re.findall(r"\s*\S+", reply):
        draft.show(word)
    draft.clear()
    stream.write("31 hours [12]\n")
    stream.close()
    shown = screen(drained(controller), columns)
    assert shown == ["a line before", "31 hours [12]"], shown


@pytest.mark.parametrize("text, columns, rows", [
    ("", 80, 0), ("x" * 80, 80, 0), ("x" * 81, 80, 1), ("x" * 160, 80, 1), ("x" * 161, 80, 2),
    ("x" * 79 + "\u754c", 80, 1),  # a wide character that does not fit the row's last cell
])
def test_the_rows_a_draft_takes_are_counted_as_the_terminal_wraps(text, columns, rows):
    assert rows_below_first(text, columns) == rows


def _ask_on_terminal(monkeypatch, capsys, tmp_path, server, reply: str, columns: int = 80):  # noqa: F811
    """`longqa ask` in process against a served chat profile replying `reply`, its stdout a pty
    whose stream writes lone surrogates as bytes (surrogateescape, as in a C locale): (what the
    terminal received as bytes, the exit code, stderr)."""
    server.replies["/v1/models"] = {"data": [{"id": f"/srv/models/{QWEN_05B.file}"}]}
    server.chat_reply = reply
    controller, stream = terminal(columns)
    monkeypatch.setattr(sys, "stdout", stream)
    code, output, _ = ask_with_server(monkeypatch, capsys, tmp_path, server)
    stream.close()
    return drained_bytes(controller), code, output.err


@pytest.mark.parametrize("reply", ["\udce2\udc80\udcae45 seconds [2]", "\udcc2\udc9b2J45 seconds [2]"])
def test_a_servers_lone_surrogates_never_reach_the_terminal_as_controls(server, monkeypatch, capsys, tmp_path,  # noqa: F811
                                                                        reply):
    received, code, err = _ask_on_terminal(monkeypatch, capsys, tmp_path, server, reply)
    assert code in (0, 4), err
    assert b"\xe2\x80\xae" not in received and b"\xc2\x9b" not in received  # RLO, C1 CSI
    assert "\ufffd".encode() in received  # the draft shows what came, as U+FFFD
    assert "internal error" not in err


def test_a_lone_surrogate_before_an_escape_is_not_an_encoding_crash(server, monkeypatch, capsys, tmp_path):  # noqa: F811
    received, code, err = _ask_on_terminal(monkeypatch, capsys, tmp_path, server, "A\udc1b[2JB 40 litres")
    assert code in (0, 4) and "UnicodeEncodeError" not in err, err
    assert b"\x1b[2J" not in received


def test_a_servers_text_is_valid_unicode_before_anything_reads_it(server):  # noqa: F811
    from longqa.models.chat import Message
    from longqa.models.openai import OpenAIGenerator

    server.replies["/v1/models"] = {"data": [{"id": f"/srv/models/{QWEN_05B.file}"}]}
    server.chat_reply = "\udcc2\udc9b2J 45 seconds [2]"
    generator = OpenAIGenerator(server.url)
    said = "".join(generator.stream(generator.chat_prompt([Message("user", "How long?")]), max_tokens=8))
    assert said == "\ufffd\ufffd2J 45 seconds [2]"
    said.encode("utf-8")  # strict: no lone surrogate left
