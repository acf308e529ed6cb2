"""A store that fills up while a document's vectors are written: the document is stored (its text
and tree went in first, in their own transaction), so the error says so and `inspect docs` lists
it with what it lacks and what completes it, rather than a "failed" document quietly listed."""

from __future__ import annotations

import contextlib
import os
import subprocess
import uuid

import pytest

from longqa.errors import StoreError
from longqa.ingest import Ingestor
from longqa.store import open_db
from tests.ask_support import reactor_handbook
from tests.command import run_json
from tests.fakes import HookedEmbedder


@contextlib.contextmanager
def small_disk(folder):
    """A 4 MiB tmpfs mounted at `folder`, where this test may mount one (root); else a skip."""
    folder.mkdir()
    if os.geteuid() != 0:
        pytest.skip("mounting a small tmpfs needs root; the SQLite-limit test covers the same path")
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=4m", f"longqa-test-{uuid.uuid4().hex[:8]}",
                              str(folder)], capture_output=True, text=True)
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here ({mounted.stderr.strip() or mounted.returncode})")
    try:
        yield folder
    finally:
        subprocess.run(["umount", "-l", str(folder)], capture_output=True)


def fill(folder) -> None:
    """Write zeros into `folder` until its file system is full."""
    with open(folder / "filler", "wb") as handle:
        with contextlib.suppress(OSError):
            while True:
                handle.write(b"\0" * 65536)
                handle.flush()


def ingest_until_full(db_path, document, make_full) -> str:
    """Ingest `document` into a real store whose disk (or SQLite's page limit) is made full just
    before its first vectors are written; the error that ends it."""
    db = open_db(db_path)
    ingestor = Ingestor(db=db, embedder=HookedEmbedder(lambda: make_full(db)))
    with pytest.raises(StoreError) as caught:
        ingestor.ingest(document)
    db.conn.close()
    return str(caught.value)


def listed(db_path) -> list[dict]:
    result, docs = run_json("inspect", "docs", db=db_path)
    assert result.returncode == 0, result.stderr
    return docs


def check_truthful(message: str, db_path) -> None:
    assert message.startswith("the store cannot be written (") and "the document is stored" in message
    assert "run `longqa reindex`" in message and "\n" not in message
    [doc] = listed(db_path)
    assert doc["leaves_without_vectors"] > 0
    assert doc["note"].startswith("stored, no vectors") and doc["note"].endswith("run `longqa reindex`")


def test_a_full_disk_during_embedding_leaves_inspect_docs_truthful(tmp_path):
    document = tmp_path / "handbook.md"
    document.write_text(reactor_handbook(), encoding="utf-8")
    with small_disk(tmp_path / "disk") as disk:
        message = ingest_until_full(disk / "store.db", document, lambda db: fill(disk))
        (disk / "filler").unlink()  # room again: `inspect docs` only reads
        check_truthful(message, disk / "store.db")


def test_a_store_at_its_sqlite_page_limit_during_embedding_is_the_same(tmp_path):
    document = tmp_path / "handbook.md"
    document.write_text(reactor_handbook(), encoding="utf-8")

    def at_limit(db):  # SQLite's own "database or disk is full", on this connection
        pages = db.execute("PRAGMA page_count").fetchone()[0]
        db.execute(f"PRAGMA max_page_count = {pages}")

    message = ingest_until_full(tmp_path / "store.db", document, at_limit)
    check_truthful(message, tmp_path / "store.db")


def test_a_document_with_all_its_vectors_has_no_note(tmp_path):
    from tests.ask_support import build_store

    build_store(tmp_path / "store.db", {"handbook.md": reactor_handbook()}, tmp_path)
    [doc] = listed(tmp_path / "store.db")
    assert doc["leaves_without_vectors"] == 0 and doc["note"] is None
