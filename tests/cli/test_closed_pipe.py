"""A reader that stops reading (`longqa ask ... | head -1`) ends the command quietly with 0, as for
`inspect`: the answer was delivered as far as it was wanted."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from longqa.models.profiles import SMALLEST
from tests.command import run

DOC = ("# Pump Manual\n\n## Inspection\n\nThe pumps are inspected every six weeks by the site engineer.\n\n"
       "## Seals\n\nReplace the seals of each pump every two years, or sooner when they weep.\n")


@pytest.fixture(scope="module")
def pump_db(tmp_path_factory):
    folder = tmp_path_factory.mktemp("pumps")
    (folder / "pumps.md").write_text(DOC)
    db = folder / "store.db"
    assert run("ingest", folder / "pumps.md", db=db).returncode == 0
    return db


def _into_a_closed_pipe(*args) -> subprocess.CompletedProcess:
    """The command with its stdout a pipe whose reader has already gone: every write meets EPIPE."""
    read, write = os.pipe()
    os.close(read)
    env = {**os.environ, "LONGQA_MODEL": SMALLEST.name}
    env.pop("LONGQA_DEBUG", None)
    try:
        return subprocess.run([sys.executable, "-m", "longqa", *map(str, args)], stdout=write,
                              stderr=subprocess.PIPE, text=True, env=env, timeout=600)
    finally:
        os.close(write)


@pytest.mark.parametrize("args", [("ask", "How often are the pumps inspected?", "--context-only"),
                                  ("ask", "How often are the pumps inspected?", "--context-only", "--json"),
                                  ("inspect", "docs")])
def test_a_closed_pipe_ends_the_command_quietly_with_0(pump_db, args):
    result = _into_a_closed_pipe(*args, "-d", pump_db)
    assert (result.returncode, result.stderr) == (0, "")
