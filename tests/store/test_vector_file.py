"""The memory-mapped matrix file beside the store: used only while it mirrors the store, rebuilt
from the store otherwise (changes, rollbacks, damaged or foreign files), read by fresh processes."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

from longqa import embedding
from longqa.ingest import Ingestor
from longqa.store import open_db, transaction, vector_file
from longqa.store.vectors import forget_vectors, load_vectors, vector_state
from tests.ask_support import reactor_handbook
from tests.fakes import FakeEmbedder

MODEL = FakeEmbedder.name


@pytest.fixture
def store(tmp_path, db_path):
    db = open_db(db_path)
    for name in ("a.md", "b.md"):
        path = tmp_path / name
        path.write_text(reactor_handbook().replace("Harbor Point", name[0].upper() * 5), encoding="utf-8")
        Ingestor(db=db, embedder=FakeEmbedder()).ingest(path)
    forget_vectors()
    return db


def stored_matrix(db) -> dict[int, bytes]:
    return {row[0]: row[1] for row in db.execute("SELECT node_id, vector FROM embeddings WHERE model = ?", [MODEL])}


def assert_mirrors_store(matrix, db) -> None:
    rows = stored_matrix(db)
    assert sorted(rows) == matrix.node_ids.tolist()
    for node_id, row in zip(matrix.node_ids.tolist(), np.asarray(matrix.matrix)):
        assert np.allclose(np.frombuffer(rows[node_id], np.float32), row, atol=1e-6)
    docs = dict(db.execute("SELECT id, doc_id FROM nodes").fetchall())
    assert matrix.doc_ids.tolist() == [docs[n] for n in matrix.node_ids.tolist()]


def test_first_load_writes_the_file_and_the_next_process_maps_it(store, db_path):
    matrix = load_vectors(store, MODEL)
    assert not isinstance(matrix.matrix, np.memmap)  # read from SQLite this time
    path = vector_file.file_for(db_path.resolve(), MODEL)
    assert path.is_file() and path.parent.name == db_path.name + ".vectors"
    forget_vectors()  # as a fresh process
    mapped = load_vectors(store, MODEL)
    assert isinstance(mapped.matrix, np.memmap)
    assert_mirrors_store(mapped, store)
    query = FakeEmbedder().embed(["emergency diesel generators"])[0]
    assert mapped.search(query, k=5) == matrix.search(query, k=5)

    script = ("import sys, json, numpy as np; from longqa.store import open_db; "
              "from longqa.store.vectors import load_vectors; "
              "m = load_vectors(open_db(sys.argv[1]), sys.argv[2]); "
              "print(json.dumps([isinstance(m.matrix, np.memmap), len(m)]))")
    out = subprocess.run([sys.executable, "-c", script, str(db_path), MODEL], capture_output=True, text=True,
                         check=True).stdout
    assert json.loads(out) == [True, len(matrix)]


def test_every_change_to_the_vectors_makes_the_file_stale(store, db_path, tmp_path):
    load_vectors(store, MODEL)
    before = vector_state(store)
    store.execute("DELETE FROM embeddings WHERE node_id = (SELECT min(node_id) FROM embeddings)")
    assert vector_state(store)[1] > before[1]
    forget_vectors()
    rebuilt = load_vectors(store, MODEL)
    assert not isinstance(rebuilt.matrix, np.memmap)  # the stale file was not used
    assert_mirrors_store(rebuilt, store)

    # re-ingesting a changed document replaces its leaves: the mapped copy follows
    path = tmp_path / "a.md"
    path.write_text(path.read_text() + "\n\nA new closing paragraph about cooling towers.\n", encoding="utf-8")
    Ingestor(db=store, embedder=FakeEmbedder()).ingest(path)
    forget_vectors()
    assert_mirrors_store(load_vectors(store, MODEL), store)


def test_a_rolled_back_write_leaves_the_file_valid(store):
    load_vectors(store, MODEL)
    before = vector_state(store)
    with pytest.raises(RuntimeError):
        with transaction(store) as conn:
            conn.execute("DELETE FROM embeddings")
            raise RuntimeError("crash before commit")
    assert vector_state(store) == before
    forget_vectors()
    assert isinstance(load_vectors(store, MODEL).matrix, np.memmap)


def test_damaged_or_foreign_files_are_ignored_and_replaced(store, db_path, tmp_path):
    path = vector_file.file_for(db_path.resolve(), MODEL)
    load_vectors(store, MODEL)
    path.write_bytes(path.read_bytes()[:-100])  # torn
    forget_vectors()
    assert not isinstance(load_vectors(store, MODEL).matrix, np.memmap)
    forget_vectors()
    assert isinstance(load_vectors(store, MODEL).matrix, np.memmap)  # rewritten whole

    # another store at the same version (same path, recreated) must not reuse the file
    other = tmp_path / "other.db"
    other_db = open_db(other)
    assert vector_state(other_db)[0] != vector_state(store)[0]
    foreign = vector_file.file_for(other.resolve(), MODEL)
    foreign.parent.mkdir(parents=True, exist_ok=True)
    foreign.write_bytes(path.read_bytes())
    forget_vectors()
    assert len(load_vectors(other_db, MODEL)) == 0


def test_an_unwritable_folder_only_costs_speed(store, db_path):
    blocker = vector_file.folder_for(db_path.resolve())
    blocker.write_text("not a folder")  # (tests run as root here, so permissions would not stop it)
    matrix = load_vectors(store, MODEL)
    assert_mirrors_store(matrix, store)
    assert blocker.read_text() == "not a folder"
    assert [p.name for p in blocker.parent.iterdir() if ".tmp" in p.name] == []


def test_vectors_added_later_by_the_embedding_phase_reach_the_file(store, db_path):
    load_vectors(store, MODEL)
    leaf = store.execute("SELECT max(node_id) FROM embeddings").fetchone()[0]
    store.execute("DELETE FROM embeddings WHERE node_id = ?", [leaf])
    doc = store.execute("SELECT doc_id FROM nodes WHERE id = ?", [leaf]).fetchone()[0]
    assert embedding.embed_pending(store, FakeEmbedder(), doc) == 1
    forget_vectors()
    assert_mirrors_store(load_vectors(store, MODEL), store)


def test_a_store_from_before_the_vector_state_migrates_and_maps(tmp_path, monkeypatch):
    import longqa.store.db as store_db
    from longqa.store.migrations import MIGRATIONS

    path, doc = tmp_path / "old.db", tmp_path / "a.md"
    doc.write_text(reactor_handbook(), encoding="utf-8")
    monkeypatch.setattr(store_db, "MIGRATIONS", MIGRATIONS[:1] + MIGRATIONS[4:])  # with the columns ingest writes today
    Ingestor(db=open_db(path), embedder=FakeEmbedder()).ingest(doc)
    monkeypatch.undo()
    db = open_db(path)
    assert vector_state(db)[1] == 0 and len(stored_matrix(db)) > 0
    forget_vectors()
    assert_mirrors_store(load_vectors(db, MODEL), db)
    forget_vectors()
    assert isinstance(load_vectors(db, MODEL).matrix, np.memmap)


def test_temporary_files_of_a_killed_writer_are_cleared(store, db_path):
    import os

    folder = vector_file.folder_for(db_path.resolve())
    folder.mkdir()
    old, fresh = folder / "x.lqv.abc.tmp", folder / "y.lqv.def.tmp"
    old.write_bytes(b"half")
    fresh.write_bytes(b"being written by another process")
    os.utime(old, (0, 0))
    load_vectors(store, MODEL)
    assert not old.exists() and fresh.exists()
