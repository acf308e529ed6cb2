"""The SQLite store: migrations, atomic document writes, replacement, removal, FTS."""

import sqlite3
from pathlib import Path

import pytest
import sqlite_utils
import sqlite_utils.plugins

from longqa.parse.blocks import Block, ParsedDocument
from longqa.store import open_db
from longqa.store import documents as docs
from longqa.store.nodes import load_tree
from longqa.structure.build import build_tree
from longqa.structure.tree import Heading, walk


def sample_tree(word: str):
    blocks = [Block("Overview", 1), Block(f"The {word} program started in spring. " * 4, 1),
              Block("Results", 2), Block(f"The {word} results were strong. " * 4, 2)]
    doc = ParsedDocument(Path("r.md"), "Report", 2, blocks)
    return build_tree(doc, [Heading(0, 1, "Overview"), Heading(2, 1, "Results")])


def record(path="/docs/r.md", sha="abc"):
    return docs.DocumentRecord(path=path, sha256=sha, title="Report", format="markdown", pages=2,
                               structure="markdown", bytes=10)


def counts(db):
    return {t: db.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in ("documents", "nodes", "nodes_fts")}


def test_store_is_wal_and_migrated_once(db_path):
    db = open_db(db_path)
    assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert [r[0] for r in db.execute("SELECT name FROM _migrations")] == [
        "m001_initial", "m002_vector_state", "m003_graph", "m004_graph_leaves", "m005_ocr_pages"]
    open_db(db_path)  # reopening applies nothing twice
    assert db.execute("SELECT count(*) FROM _migrations").fetchone()[0] == 5


class _ConnectionPlugin:
    """A sqlite-utils plugin as another tool might install one: it changes every connection."""

    @sqlite_utils.hookimpl
    def prepare_connection(self, conn):
        conn.create_function("plugin_was_here", 0, lambda: 1)


def test_no_sqlite_utils_plugin_runs_on_the_store(db_path, monkeypatch):
    plugin = _ConnectionPlugin()
    sqlite_utils.plugins.pm.register(plugin)
    try:
        open_db(db_path).close()
        for db in (open_db(db_path), open_db(db_path, readonly=True), open_db(":memory:")):
            with pytest.raises(sqlite3.OperationalError, match="no such function"):
                db.execute("SELECT plugin_was_here()")
        assert sqlite_utils.Database(sqlite3.connect(":memory:")).execute("SELECT plugin_was_here()").fetchone() == (1,)
    finally:
        sqlite_utils.plugins.pm.unregister(plugin)


def test_save_load_roundtrip_and_fts(db):
    doc_id = docs.save_document(db, record(), sample_tree("falcon"))
    root = load_tree(db, doc_id)
    assert [n.title for n in root.children] == ["Overview", "Results"]
    assert root.children[1].children[0].page_start == 2
    hits = [r[0] for r in db.execute("SELECT rowid FROM nodes_fts WHERE nodes_fts MATCH 'falcon'")]
    leaf_ids = [n.id for n in walk(root) if n.is_leaf]
    assert sorted(hits) == sorted(leaf_ids)


def test_replacing_keeps_the_id_and_drops_old_nodes(db):
    first = docs.save_document(db, record(sha="1"), sample_tree("falcon"))
    second = docs.save_document(db, record(sha="2"), sample_tree("heron"))
    assert first == second
    assert counts(db)["documents"] == 1
    assert not list(db.execute("SELECT rowid FROM nodes_fts WHERE nodes_fts MATCH 'falcon'"))
    assert list(db.execute("SELECT rowid FROM nodes_fts WHERE nodes_fts MATCH 'heron'"))


def test_failure_mid_write_leaves_no_partial_document(db, monkeypatch):
    docs.save_document(db, record(path="/docs/keep.md"), sample_tree("falcon"))
    before = counts(db)

    def explode(conn, doc_id, root):
        conn.execute("INSERT INTO nodes (doc_id, kind, ord, depth, page_start, page_end, char_start, "
                     "char_end, tokens) VALUES (?, 'paragraph', 0, 1, 1, 1, 0, 0, 0)", (doc_id,))
        raise KeyboardInterrupt  # Ctrl-C between statements of one document

    monkeypatch.setattr(docs, "_insert_nodes", explode)
    with pytest.raises(KeyboardInterrupt):
        docs.save_document(db, record(path="/docs/new.md"), sample_tree("heron"))
    with pytest.raises(KeyboardInterrupt):  # a failed *replacement* must keep the stored version
        docs.save_document(db, record(path="/docs/keep.md", sha="zzz"), sample_tree("heron"))
    assert counts(db) == before
    assert docs.find_by_path(db, "/docs/keep.md")["sha256"] == "abc"


def test_delete_removes_everything_derived(db):
    doc_id = docs.save_document(db, record(), sample_tree("falcon"))
    docs.delete_document(db, doc_id)
    assert counts(db) == {"documents": 0, "nodes": 0, "nodes_fts": 0}


def test_not_a_store_gives_a_clear_error(tmp_path):
    bogus = tmp_path / "bogus.db"
    bogus.write_bytes(b"this is not sqlite" * 100)
    from longqa.errors import LongqaError

    with pytest.raises(LongqaError, match="not a longqa store"):
        open_db(bogus)
