"""`longqa ingest DIR` killed (SIGKILL) at several points and run again: every file ends stored
once, with its full-text rows and its vectors, and the run that resumes neither parses a stored
document again nor embeds a leaf that already has a vector.

Real command, real store, the real default embedder: the kills land where they land in a real
run, and the invariants are checked after each of them."""

from __future__ import annotations

import contextlib
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

from tests.command import run_json

FILES = 8
# Leaves per document: three chunks of the embedding phase (64 leaves each), so a kill can land
# between a document's chunks, with some of its leaves embedded and others not.
PARAGRAPHS = 150


def write_library(folder: Path) -> None:
    folder.mkdir()
    for i in range(FILES):
        body = "\n\n".join(f"Paragraph {j} of file {i} on topic {j % 11}: the pump {j % 5} and valve {j % 3}."
                           for j in range(PARAGRAPHS))
        (folder / f"file{i:02}.txt").write_text(f"File {i}\n\n{body}\n")


def counts(db_path: Path) -> dict:
    """What the store holds: documents, nodes, leaves, vectors, full-text rows, and per
    document (path, nodes stored, nodes the record says, leaves, vectors)."""
    with sqlite3.connect(db_path) as conn:
        one = lambda sql: conn.execute(sql).fetchone()[0]  # noqa: E731
        docs = conn.execute(
            "SELECT d.path, d.nodes, (SELECT count(*) FROM nodes n WHERE n.doc_id = d.id), "
            "(SELECT count(*) FROM nodes n WHERE n.doc_id = d.id AND n.kind = 'paragraph'), "
            "(SELECT count(*) FROM embeddings e JOIN nodes n ON n.id = e.node_id WHERE n.doc_id = d.id) "
            "FROM documents d ORDER BY d.path").fetchall()
        conn.execute("INSERT INTO nodes_fts(nodes_fts) VALUES('integrity-check')")  # raises when out of step
        return {
            "documents": one("SELECT count(*) FROM documents"),
            "nodes": one("SELECT count(*) FROM nodes"),
            "orphan_nodes": one("SELECT count(*) FROM nodes WHERE doc_id NOT IN (SELECT id FROM documents)"),
            "leaves": one("SELECT count(*) FROM nodes WHERE kind = 'paragraph'"),
            "vectors": one("SELECT count(*) FROM embeddings"),
            "orphan_vectors": one("SELECT count(*) FROM embeddings WHERE node_id NOT IN (SELECT id FROM nodes)"),
            "fts_rows": one("SELECT count(*) FROM nodes_fts_docsize"),
            "per_document": docs,
        }


def partly_embedded(db_path: Path) -> bool:
    """A document is stored with some, not all, of its leaves embedded: its vectors are being written."""
    try:
        with sqlite3.connect(db_path, timeout=0.1) as conn:
            return conn.execute(
                "SELECT 1 FROM documents d WHERE "
                "(SELECT count(*) FROM embeddings e JOIN nodes n ON n.id = e.node_id WHERE n.doc_id = d.id) "
                "BETWEEN 1 AND (SELECT count(*) FROM nodes n WHERE n.doc_id = d.id AND n.kind = 'paragraph') - 1"
            ).fetchone() is not None
    except sqlite3.OperationalError:  # not created yet, or busy: look again
        return False


def stored_documents(db_path: Path) -> int:
    try:
        with sqlite3.connect(db_path, timeout=5) as conn:
            return conn.execute("SELECT count(*) FROM documents").fetchone()[0]
    except sqlite3.OperationalError:
        return 0


@contextlib.contextmanager
def store_held_after_documents(db_path: Path, documents: int, process: subprocess.Popen):
    """Once the store holds `documents` documents, hold its write lock (BEGIN IMMEDIATE) for the
    body of the `with`: the ingest in `process` can then write nothing more until it is let go."""
    deadline = time.monotonic() + 300
    while True:
        assert process.poll() is None, "the ingest ended before the documents were stored"
        assert time.monotonic() < deadline, f"{documents} documents not stored within 300 s"
        # No busy wait: queued on SQLite's busy handler, the probe can lose every gap between the
        # ingest's transactions to the ingest itself and get the lock only once the batch is done.
        conn = sqlite3.connect(db_path, timeout=0, isolation_level=None)
        try:
            conn.execute("BEGIN IMMEDIATE")
            if conn.execute("SELECT count(*) FROM documents").fetchone()[0] >= documents:
                assert process.poll() is None, "the ingest ended before the lock was taken"
                yield
                return
        except sqlite3.OperationalError:  # not created yet, or busy: look again
            pass
        finally:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            conn.close()
        time.sleep(0.02)


def kill_when(argv: list[str], ready, what: str) -> None:
    """Start the ingest, SIGKILL it as soon as `ready()` holds (looked at every 20 ms)."""
    process = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 300
        while not ready():
            assert process.poll() is None, f"the ingest ended before {what}"
            assert time.monotonic() < deadline, f"no {what} within 300 s"
            time.sleep(0.02)
    finally:
        os.kill(process.pid, signal.SIGKILL)
        process.wait()


def assert_whole(state: dict) -> None:
    """Every stored document whole (all its nodes, each indexed); no node or vector of nothing."""
    assert state["orphan_nodes"] == 0 and state["orphan_vectors"] == 0
    assert state["fts_rows"] == state["nodes"]
    for path, recorded, nodes, _leaves, _vectors in state["per_document"]:
        assert nodes == recorded, path


def test_killed_three_times_then_resumed_stores_each_file_once(tmp_path, db_path):
    folder = tmp_path / "library"
    write_library(folder)
    argv = [sys.executable, "-m", "longqa", "ingest", str(folder), "-d", str(db_path), "--quiet"]

    kill_when(argv, lambda: partly_embedded(db_path), "document partly embedded")
    first = counts(db_path)
    assert_whole(first)
    assert 0 < first["vectors"] < first["leaves"]  # killed inside the embedding phase

    before = first["documents"]
    kill_when(argv, lambda: stored_documents(db_path) >= before + 2, "two more documents stored")
    assert_whole(counts(db_path))

    kill_when(argv, lambda: partly_embedded(db_path), "document partly embedded")
    killed = counts(db_path)
    assert_whole(killed)
    assert killed["documents"] < FILES

    result, out = run_json("ingest", folder, db=db_path)
    assert result.returncode == 0, result.stderr
    final = counts(db_path)
    assert_whole(final)
    # Stored once each: one record per file, every leaf with one vector, every node indexed.
    assert final["documents"] == FILES
    assert len({row[0] for row in final["per_document"]}) == FILES
    assert final["vectors"] == final["leaves"] and final["fts_rows"] == final["nodes"]
    _, listing = run_json("inspect", "docs", db=db_path)
    assert len(listing) == FILES and all(d["leaves_without_vectors"] == 0 for d in listing)

    # The resumed run parsed only the files not stored yet, and embedded only the missing leaves.
    stored_before = {row[0]: row for row in killed["per_document"]}
    for entry in out["documents"]:
        if entry["path"] in stored_before:
            _, _, _, leaves, vectors = stored_before[entry["path"]]
            assert entry["status"] == "skipped" and entry["embedded"] == leaves - vectors
        else:
            assert entry["status"] == "added"
            leaves = next(row[3] for row in final["per_document"] if row[0] == entry["path"])
            assert entry["embedded"] == leaves
    assert sum(e["embedded"] for e in out["documents"]) == killed["leaves"] - killed["vectors"] + (
        final["leaves"] - killed["leaves"])

    # Once everything is stored, another run does nothing at all.
    result, again = run_json("ingest", folder, db=db_path)
    assert {e["status"] for e in again["documents"]} == {"skipped"}
    assert sum(e["embedded"] for e in again["documents"]) == 0
    assert counts(db_path) == final


def test_ctrl_c_mid_batch_ends_in_one_line_and_the_next_run_finishes(tmp_path, db_path):
    folder = tmp_path / "library"
    write_library(folder)
    argv = [sys.executable, "-m", "longqa", "ingest", str(folder), "-d", str(db_path)]
    # Ctrl-C's default action in the child even when the tests run as a background job, whose
    # processes start with SIGINT ignored (Python then installs no KeyboardInterrupt handler).
    process = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    with store_held_after_documents(db_path, 2, process):
        # The ingest cannot store another document while the lock is held, so the interrupt
        # lands mid-batch however fast the rest of the batch would have gone.
        process.send_signal(signal.SIGINT)
        time.sleep(0.5)
    stdout, stderr = process.communicate(timeout=120)
    assert process.returncode == 130 and stdout == ""
    assert stderr.splitlines() == ["longqa: interrupted"], stderr
    interrupted = counts(db_path)
    assert_whole(interrupted)
    assert interrupted["documents"] < FILES

    result, out = run_json("ingest", folder, db=db_path)
    assert result.returncode == 0
    final = counts(db_path)
    assert final["documents"] == FILES and final["vectors"] == final["leaves"]
    assert [e["status"] for e in out["documents"]].count("added") == FILES - interrupted["documents"]
