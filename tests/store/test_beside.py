"""Work run beside the caller (store/beside.py): the worker's read-only connection sees what the
caller has committed and cannot write; where it would not see what the caller sees (an
in-memory store, the caller's uncommitted writes) there is none and the caller queries itself."""

from __future__ import annotations

import sqlite3

import pytest

from longqa.store import beside as beside_module
from longqa.store import open_db, transaction
from longqa.store.beside import beside, side_reader
from longqa.store.fts_cut import match_rows_cut
from longqa.retrieve.settings import RETRIEVAL
from longqa.retrieve.terms import fts_match
from tests.store.test_bm25_cut import shelf


def test_the_side_reader_reads_the_store_and_cannot_write_it(tmp_path, db):
    shelf(tmp_path, db)
    reader = side_reader(db)
    assert reader is not None and side_reader(db) is reader  # one per open store
    leaves = db.execute("SELECT count(*) FROM nodes").fetchone()[0]
    assert beside(lambda: reader.execute("SELECT count(*) FROM nodes").fetchone()[0]).result() == leaves
    with pytest.raises(sqlite3.OperationalError, match="readonly"):
        beside(reader.execute, "DELETE FROM nodes").result()


def test_no_side_reader_for_an_in_memory_store_or_uncommitted_writes(tmp_path, db):
    assert side_reader(open_db(":memory:")) is None
    shelf(tmp_path, db)
    with transaction(db):
        assert side_reader(db) is None


def test_the_cut_gives_the_same_rows_with_its_second_query_beside_or_not(tmp_path, db, monkeypatch):
    shelf(tmp_path, db)
    phrases = fts_match("footwear revenue").split(" OR ")
    ran_beside = []
    real = beside_module.beside
    monkeypatch.setattr("longqa.store.fts_cut.beside", lambda *a: ran_beside.append(a[2]) or real(*a))
    parallel = match_rows_cut(db, phrases, RETRIEVAL.column_weights, 5, 10)
    # the rare phrases' query ran on the worker: "revenue", in every paragraph, is common here
    assert len(ran_beside) == 1 and '"footwear"' in ran_beside[0] and '"revenue"' not in ran_beside[0]
    monkeypatch.setattr("longqa.store.fts_cut.side_reader", lambda db: None)
    assert match_rows_cut(db, phrases, RETRIEVAL.column_weights, 5, 10) == parallel
    assert len(ran_beside) == 1
