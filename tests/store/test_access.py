"""Who can read the store, and what reading commands may change: new stores are private (0600
files, 0700 directories); `inspect` and `ask` never create, convert or migrate a store, work on
one the user cannot write, and refuse a database that is not a longqa store, leaving it as it was."""

import hashlib
import os
import shutil
import sqlite3
import stat
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from tests.command import run

REPO_ROOT = Path(__file__).resolve().parents[2]

DOC = "# Handbook\n\n## Safety\n\nWear goggles in the lab at all times.\n\n## Cleaning\n\nWipe benches with ethanol.\n"
READERS = [("inspect", "docs"), ("inspect", "tree", "1"), ("inspect", "node", "1"),
           ("ask", "goggles", "--retrieval", "bm25", "--context-only", "--no-analysis")]


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_new_store_and_data_directory_are_private(tmp_path):
    home = tmp_path / "home" / "longqa"
    doc = tmp_path / "h.md"
    doc.write_text(DOC)
    # A permissive umask, as on many desktops: the store must not follow it.
    argv = [sys.executable, "-m", "longqa", "ingest", str(doc), "--structure", "layout"]
    result = subprocess.run(argv, capture_output=True, text=True, preexec_fn=lambda: os.umask(0o002),
                            env={**os.environ, "LONGQA_HOME": str(home)})
    assert result.returncode == 0, result.stderr
    store = home / "longqa.db"
    assert mode(home) == 0o700 and mode(home.parent) == 0o700
    assert mode(store) == 0o600
    # While a writer holds the store, its log and index exist: they are private too.
    conn = sqlite3.connect(store)
    conn.execute("BEGIN IMMEDIATE")
    conn.execute("INSERT INTO llm_cache VALUES ('k', 'm', 'v', 'now')")
    for side in ("longqa.db-wal", "longqa.db-shm"):
        assert mode(home / side) == 0o600
    conn.rollback()
    conn.close()


def test_inspect_docs_reports_a_store_others_can_read(tmp_path, db_path):
    doc = tmp_path / "h.md"
    doc.write_text(DOC)
    run("ingest", doc, "--structure", "layout", db=db_path)
    quiet = run("inspect", "docs", db=db_path)
    assert quiet.returncode == 0 and "warning" not in quiet.stderr
    db_path.chmod(0o644)
    loud = run("inspect", "docs", db=db_path)
    assert loud.returncode == 0
    warnings = loud.stderr.splitlines()
    assert len(warnings) == 1
    assert warnings[0].startswith("longqa: warning: other users can read this store (store.db 0644")
    assert f"; make it private with: chmod 600 {db_path}" in warnings[0]


def test_reading_commands_never_create_a_store(tmp_path):
    missing = tmp_path / "typo" / "stor.db"
    for args in [*READERS, ("rm", "1"), ("reindex",)]:
        result = run(*args, db=missing)
        assert result.returncode == 1
        assert result.stderr.splitlines() == [
            f"longqa: error: {missing}: no store here yet (it is empty until you add documents with `longqa ingest PATH`)"
        ]
    assert not missing.parent.exists()


def test_a_database_that_is_not_a_store_is_refused_untouched(tmp_path):
    other = tmp_path / "other.db"
    with sqlite3.connect(other) as conn:
        conn.execute("CREATE TABLE invoices (id INTEGER PRIMARY KEY, total REAL)")
        conn.execute("INSERT INTO invoices (total) VALUES (12.5)")
    conn.close()
    before = digest(other)
    doc = tmp_path / "h.md"
    doc.write_text(DOC)
    for args in [*READERS, ("ingest", str(doc)), ("rm", "1")]:
        result = run(*args, db=other)
        assert result.returncode == 1, args
        assert result.stderr.strip() == (
            f"longqa: error: {other}: not a longqa store (an SQLite database with other tables); left untouched"
        ), args
    assert digest(other) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["h.md", "other.db"]


def test_a_store_that_needs_upgrading_is_not_migrated_by_readers(tmp_path, db_path):
    doc = tmp_path / "h.md"
    doc.write_text(DOC)
    run("ingest", doc, "--structure", "layout", db=db_path)
    with sqlite3.connect(db_path) as conn:
        conn.execute("DELETE FROM _migrations")  # as if written by an older longqa
    conn.close()
    before = digest(db_path)
    result = run("inspect", "docs", db=db_path)
    assert result.returncode == 1 and "the store needs upgrading (m001_initial" in result.stderr
    assert digest(db_path) == before


def unprivileged() -> list[str]:
    """The command prefix that runs as an ordinary user: root may write anything, so a read-only
    store would prove nothing to it."""
    if os.geteuid() != 0:
        return []
    if not shutil.which("setpriv"):
        pytest.skip("running as root without setpriv: cannot make a store read-only to this user")
    return ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]


def test_a_read_only_store_in_a_read_only_directory_can_be_read(tmp_path):
    doc = tmp_path / "h.md"
    doc.write_text(DOC)
    # Outside pytest's private temp tree, so that the unprivileged user can reach it.
    folder = Path(tempfile.mkdtemp(prefix="longqa-ro-"))
    try:
        folder.chmod(0o755)
        store = folder / "store.db"
        assert run("ingest", doc, "--structure", "layout", db=store).returncode == 0
        store.chmod(0o444)
        folder.chmod(0o555)
        before, listed = digest(store), sorted(p.name for p in folder.iterdir())  # the store, its vectors
        for args in READERS:
            argv = [*unprivileged(), sys.executable, "-m", "longqa", *args, "-d", str(store)]
            result = subprocess.run(argv, capture_output=True, text=True, cwd=REPO_ROOT,
                                    env={**os.environ, "PYTHONPATH": str(REPO_ROOT)})
            assert result.returncode == 0, (args, result.stderr)
            assert "error" not in result.stderr
        assert "Wear goggles" in result.stdout
        assert digest(store) == before
        assert sorted(p.name for p in folder.iterdir()) == listed  # reading wrote nothing beside it
    finally:
        folder.chmod(0o755)
        shutil.rmtree(folder)
