"""Run the real `longqa` command in a subprocess, as a user's shell would."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from longqa.models.profiles import SMALLEST


def run(*args, db: Path | None = None, stdin: str | None = None, env: dict | None = None, timeout=600):
    argv = [sys.executable, "-m", "longqa", *map(str, args)]
    if db is not None:
        argv += ["-d", str(db)]
    full_env = {**os.environ, **(env or {})}
    full_env.pop("LONGQA_DEBUG", None)
    # What answers is the smallest profile unless the test names one (-m, a server, or
    # LONGQA_MODEL, empty for the default itself); `ingest` structures with it by default anyway.
    answers = bool(args) and str(args[0]) in ("ask", "eval")
    if answers and not {"-m", "--model", "--llm-url"} & set(map(str, args)) and "LONGQA_MODEL" not in (env or {}):
        full_env["LONGQA_MODEL"] = SMALLEST.name
    return subprocess.run(argv, input=stdin, capture_output=True, text=True, env=full_env, timeout=timeout)


def run_json(*args, db: Path | None = None, **kwargs):
    result = run(*args, "--json", db=db, **kwargs)
    assert "Traceback" not in result.stderr, result.stderr
    return result, json.loads(result.stdout) if result.stdout.strip() else None


def drained(controller: int) -> str:
    """Everything a pseudo-terminal's controller side receives until the command at the other end
    ends and closes it (EIO on Linux, b"" elsewhere), as text; the controller is closed after."""
    return drained_bytes(controller).decode("utf-8", "replace")


def drained_bytes(controller: int) -> bytes:
    """`drained`, as the bytes received."""
    received = bytearray()
    while True:
        try:
            chunk = os.read(controller, 65536)
        except OSError:
            break
        if not chunk:
            break
        received += chunk
    os.close(controller)
    return bytes(received)
