"""`longqa ingest` over many files: one progress line (files done/total, pages, pages/s, ETA)
when stderr is a terminal, and nothing beyond the per-file lines and the summary on a pipe.

The terminal is a real pseudo-terminal (Python's pty module) with the real command behind it."""

from __future__ import annotations

import fcntl
import io
import os
import pty
import re
import struct
import subprocess
import sys
import termios
from pathlib import Path

import pytest

from rich.console import Console

from longqa.cli.ingest import _progress, _short, clock, eta_seconds, pages_text
from tests.command import drained, run, run_json

DOC = "# Notes {i}\n\n## Part\n\nThe pump {i} runs at night and the valve stays shut.\n"
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


def library(folder: Path, n: int = 3) -> Path:
    folder.mkdir()
    for i in range(n):
        (folder / f"notes{i}.md").write_text(DOC.format(i=i))
    return folder


def ingest_on_terminal(*args: str, columns: int = 80) -> tuple[str, str, int]:
    """`longqa ingest ARGS` with stderr on a pseudo-terminal `columns` wide: (what the terminal
    received, escape codes removed; stdout; exit code)."""
    controller, terminal = pty.openpty()
    fcntl.ioctl(terminal, termios.TIOCSWINSZ, struct.pack("HHHH", 40, columns, 0, 0))
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES", "LONGQA_DEBUG")}
    env["TERM"] = "xterm-256color"
    process = subprocess.Popen([sys.executable, "-m", "longqa", "ingest", *args], stdin=subprocess.DEVNULL,
                               stdout=subprocess.PIPE, stderr=terminal, env=env)
    os.close(terminal)
    received = drained(controller)
    stdout = process.stdout.read().decode()
    process.stdout.close()
    return ANSI.sub("", received), stdout, process.wait(60)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="pseudo-terminal size set the Linux way")
def test_a_terminal_shows_files_pages_rate_and_eta(tmp_path, db_path):
    folder = library(tmp_path / "lib")
    screen, stdout, code = ingest_on_terminal(str(folder), "-d", str(db_path))
    assert code == 0 and stdout == ""
    # The last state drawn before the line is cleared: every file, its pages, a rate, no time left.
    assert re.search(r"notes2\.md ━+ 3/3 files, 3 pages, [0-9.]+ pages/s, ETA 0:00:00", screen), screen[-600:]
    assert screen.rstrip().endswith("3 added")
    assert "Traceback" not in screen

    # Run again: everything stored, the bar still counts the files, no page is parsed again.
    screen, _, code = ingest_on_terminal(str(folder), "-d", str(db_path))
    assert code == 0 and re.search(r"3/3 files, 0 pages, 0\.0 pages/s, ETA 0:00:00", screen) and screen.rstrip().endswith("3 skipped")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="pseudo-terminal size set the Linux way")
def test_quiet_and_json_draw_nothing_on_a_terminal(tmp_path, db_path):
    folder = library(tmp_path / "lib")
    screen, _, code = ingest_on_terminal(str(folder), "-d", str(db_path), "--quiet")
    assert code == 0 and screen.strip() == ""
    screen, stdout, code = ingest_on_terminal(str(folder), "-d", str(db_path), "--json")
    assert code == 0 and screen.strip() == "" and '"skipped"' in stdout


def test_a_pipe_gets_the_failure_lines_and_the_summary_only(tmp_path, db_path):
    folder = library(tmp_path / "lib")
    (folder / "blob.txt").write_bytes(b"\x00\x01\x02" * 100)
    result = run("ingest", folder, db=db_path)
    assert result.returncode == 3 and result.stdout == ""
    lines = result.stderr.splitlines()
    assert len(lines) == 2, result.stderr
    assert lines[0].startswith("longqa: ") and "blob.txt" in lines[0] and "binary" in lines[0]
    assert lines[1] == "3 added, 1 failed"
    assert "\x1b" not in result.stderr and "\r" not in result.stderr

    result, out = run_json("ingest", folder, db=db_path)
    assert [d["status"] for d in out["documents"]].count("skipped") == 3
    assert len(result.stderr.splitlines()) == 1 and "blob.txt" in result.stderr  # the failure, on stderr


def test_eta_counts_only_the_files_this_run_worked_on():
    assert eta_seconds(10, 0, 0.0) is None  # nothing worked on yet: not known
    assert eta_seconds(10, 4, 8.0) == 20.0  # 2 s a file
    assert eta_seconds(0, 0, 0.0) == 0.0
    assert clock(None) == "-:--:--" and clock(0.4) == "0:00:00" and clock(3725) == "1:02:05"


def test_pages_and_their_rate():
    assert pages_text(0, None) == "0 pages, 0.0 pages/s"
    assert pages_text(45, 10.0) == "45 pages, 4.5 pages/s"
    assert pages_text(12_345, 100.0) == "12,345 pages, 123 pages/s"


def test_eighty_columns_hold_the_line_with_a_long_name():
    """A long file name is cut short; the figures stay whole, on one line."""
    screen = io.StringIO()
    console = Console(file=screen, width=80, no_color=True)
    progress = _progress(True, console)
    task = progress.add_task(_short(Path("quarterly-report-of-the-northern-division-2023.pdf")), total=1000,
                             unit="files", pages=12_345, worked=400, worked_seconds=600.0)
    progress.update(task, completed=990)
    progress.tasks[0].start_time -= 300  # five minutes in: 41 pages/s
    console.print(progress.make_tasks_table(progress.tasks))
    line = screen.getvalue()
    assert line.count("\n") == 1 and line.startswith("quarterly-repor")
    assert re.search(r" 990/1,000 files, 12,345 pages, 41 pages/s, ETA 0:00:15$", line.rstrip()), line
