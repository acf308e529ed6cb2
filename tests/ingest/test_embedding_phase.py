"""Searchable before embedded: text and tree are stored first, vectors follow in chunks, an
interrupted embedding resumes on the next run, and `ask` says which leaves BM25 alone ranks."""

from __future__ import annotations

import json

import pytest

from longqa import embedding
from longqa.ingest import Ingestor
from longqa.store import open_db
from longqa.store.vectors import leaf_count, leaves_without_vectors, load_vectors
from tests.ask_support import make_pipeline, reactor_handbook
from tests.conftest import use_fake_models
from tests.fakes import FakeEmbedder, FakeGenerator
from tests.cli.test_ask import longqa

QUESTION = "How fast do the emergency diesel generators start after a grid loss?"


def interrupt_on_call(monkeypatch, call: int) -> None:
    """Ctrl-C arrives during the `call`-th embedding call (control flow only)."""
    calls = {"n": 0}
    real = FakeEmbedder.embed

    def embed(self, texts):
        calls["n"] += 1
        if calls["n"] == call:
            raise KeyboardInterrupt
        return real(self, texts)

    monkeypatch.setattr(FakeEmbedder, "embed", embed)


@pytest.fixture
def handbook(tmp_path):
    path = tmp_path / "handbook.md"
    path.write_text(reactor_handbook(), encoding="utf-8")
    return path


def test_interrupted_embedding_keeps_the_document_and_finished_chunks(db, handbook, monkeypatch):
    monkeypatch.setattr(embedding, "CHUNK_LEAVES", 4)
    interrupt_on_call(monkeypatch, 3)
    with pytest.raises(KeyboardInterrupt):
        Ingestor(db=db, embedder=FakeEmbedder()).ingest(handbook)
    leaves = leaf_count(db)
    assert leaves > 8
    # the document is whole and searchable by BM25; two chunks of four leaves have vectors
    assert db.execute("SELECT count(*) FROM documents").fetchone()[0] == 1
    assert db.execute("SELECT count(*) FROM nodes_fts WHERE nodes_fts MATCH 'diesel'").fetchone()[0] >= 1
    assert len(load_vectors(db, FakeEmbedder.name)) == 8
    assert leaves_without_vectors(db, FakeEmbedder.name) == leaves - 8

    monkeypatch.undo()
    result = Ingestor(db=db, embedder=FakeEmbedder()).ingest(handbook)  # unchanged file: resumes
    assert (result.status, result.embedded) == ("skipped", leaves - 8)
    assert leaves_without_vectors(db, FakeEmbedder.name) == 0
    again = Ingestor(db=db, embedder=FakeEmbedder()).ingest(handbook)
    assert (again.status, again.embedded) == ("skipped", 0)


def test_ask_notes_leaves_without_vectors_and_still_finds_them_by_bm25(db, handbook):
    Ingestor(db=db, embedder=None).ingest(handbook)  # text and tree only, as before vectors come
    first = Ingestor(db=db, embedder=FakeEmbedder())
    leaf_ids = [row[0] for row in db.execute("SELECT id FROM nodes WHERE kind = 'paragraph' ORDER BY id")]
    half = leaf_ids[: len(leaf_ids) // 2]
    embedding.store_vectors(db, FakeEmbedder.name, half, FakeEmbedder().embed(["x"] * len(half)))

    refined = make_pipeline(db, FakeGenerator()).retrieve_context(QUESTION)
    missing = len(leaf_ids) - len(half)
    note = next(n for n in refined.notes if "no vectors yet" in n)
    assert note.startswith(f"{missing} leaves in 1 document(s) have no vectors yet, so BM25 alone ranks them")
    assert any("emergency diesel generators start within 10 seconds" in p.text for p in refined.passages)

    assert first.ingest(handbook).embedded == missing  # the next run completes the vectors
    refined = make_pipeline(db, FakeGenerator()).retrieve_context(QUESTION)
    assert not any("no vectors yet" in n for n in refined.notes)


def test_ask_json_carries_the_note(tmp_path, db_path, handbook, monkeypatch, capsys):
    db = open_db(db_path)
    Ingestor(db=db, embedder=FakeEmbedder()).ingest(handbook)
    db.execute("DELETE FROM embeddings WHERE node_id = (SELECT max(node_id) FROM embeddings)")
    use_fake_models(monkeypatch)
    code, out, err = longqa(monkeypatch, capsys, "ask", QUESTION, "--json", "-d", db_path)
    assert code == 0, err
    assert "1 leaves in 1 document(s) have no vectors yet" in " ".join(json.loads(out)["notes"])


def test_vectors_written_for_a_leaf_deleted_meanwhile_are_passed_over(db, handbook):
    Ingestor(db=db, embedder=None).ingest(handbook)
    ids = [row[0] for row in db.execute("SELECT id FROM nodes WHERE kind = 'paragraph' ORDER BY id")]
    vectors = FakeEmbedder().embed(["a", "b"])
    assert embedding.store_vectors(db, FakeEmbedder.name, [ids[0], 10**9], vectors) == 1
    assert embedding.store_vectors(db, FakeEmbedder.name, [ids[0]], vectors[:1]) == 0  # never overwritten
