"""The dense candidate cut (sign bits, then exact scores of a pool) agrees with exact search, on a
store the code builds: the sample handbook ingested with the default embedder, read back through
the memory-mapped file as a fresh process reads it, and through SQLite where no file can be."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from longqa.ingest import Ingestor
from longqa.retrieve import dense
from longqa.retrieve.settings import RETRIEVAL
from longqa.store import open_db, vector_file
from longqa.store.vectors import Cut, forget_vectors, load_vectors

HANDBOOK = Path(__file__).resolve().parents[2] / "examples" / "kestrel_valley_handbook.pdf"
QUESTIONS = [
    "How long can the standby generators run the works before the diesel runs out?",
    "What coagulant is dosed at the works?",
    "Who is responsible for the chlorine contact tank?",
    "How often are the filters backwashed?",
    "What happens when turbidity exceeds the limit?",
    "How many customers does the works supply?",
]


@pytest.fixture(scope="module")
def handbook(tmp_path_factory):
    from longqa.models.resolve import load_embedder

    embedder = load_embedder()
    path = tmp_path_factory.mktemp("cut") / "store.db"
    db = open_db(path)
    Ingestor(db=db, embedder=embedder).ingest(HANDBOOK)
    queries = embedder.embed(QUESTIONS)
    load_vectors(db, embedder.name)  # the first load writes the file the tests map
    return path, db, embedder.name, queries


def fresh(db, model):
    forget_vectors()  # as a new process: the file is mapped again
    return load_vectors(db, model)


def ids(hits):
    return [h.node_id for h in hits]


def test_a_pool_of_nearly_the_whole_store_is_exact_search(handbook):
    path, db, model, queries = handbook
    vectors = fresh(db, model)
    assert vectors.row_reader is not None and vectors.codes is not None  # mapped, sign bits from the file
    everything = Cut(exact_max=0, pool=len(vectors) - 1)  # the sign bits drop one row
    for query in queries:
        exact = vectors.search(query, 10)
        cut = vectors.search(query, 10, cut=everything)
        assert ids(cut) == ids(exact)
        assert [h.score for h in cut] == pytest.approx([h.score for h in exact], abs=1e-6)


def test_a_small_pool_keeps_the_exact_top_hits(handbook):
    path, db, model, queries = handbook
    vectors = fresh(db, model)
    k, pool = 5, len(vectors) // 2  # half the rows scored exactly
    assert len(vectors) > pool
    kept = []
    for query in queries:
        exact = vectors.search(query, k)
        cut = vectors.search(query, k, cut=Cut(exact_max=0, pool=pool))
        assert cut[0].node_id == exact[0].node_id
        kept.append(len(set(ids(exact)) & set(ids(cut))) / k)
        # the cut's hits carry their exact scores, so any hit both share scores alike
        shared = {h.node_id: h.score for h in exact}
        assert all(h.score == pytest.approx(shared[h.node_id], abs=1e-6) for h in cut if h.node_id in shared)
    assert np.mean(kept) >= 0.95, kept


def test_scoped_search_and_the_sqlite_copy_agree_with_the_file(handbook, monkeypatch):
    path, db, model, queries = handbook
    doc = db.execute("SELECT id FROM documents").fetchone()[0]
    mapped = fresh(db, model)
    everything = Cut(exact_max=0, pool=len(mapped) - 1)
    expected = [ids(mapped.search(q, 8, doc_ids=[doc])) for q in queries]
    assert expected == [ids(mapped.search(q, 8, doc_ids=[doc], cut=everything)) for q in queries]
    assert mapped.search(queries[0], 8, doc_ids=[doc + 1000], cut=everything) == []
    # no file possible: vectors read from SQLite, sign bits made in memory
    monkeypatch.setattr(vector_file, "read", lambda *a, **k: None)
    monkeypatch.setattr(vector_file, "write", lambda *a, **k: False)
    from_sqlite = fresh(db, model)
    assert from_sqlite.row_reader is None and from_sqlite.codes is None
    assert expected == [ids(from_sqlite.search(q, 8, doc_ids=[doc], cut=everything)) for q in queries]
    assert from_sqlite.codes is not None
    np.testing.assert_array_equal(from_sqlite.codes, vector_file.sign_codes(from_sqlite.matrix))
    forget_vectors()


def test_retrieval_switches_to_the_cut_only_above_the_setting(handbook):
    path, db, model, queries = handbook
    forget_vectors()
    rows = len(load_vectors(db, model))
    exact = dense.search(db, queries[0], model, k=10, settings=RETRIEVAL)
    assert rows <= RETRIEVAL.dense_exact_max  # a handbook is searched exactly by default
    through_cut = dense.search(db, queries[0], model, k=10,
                               settings=RETRIEVAL.but(dense_exact_max=0, dense_cut_pool=rows))
    assert ids(through_cut) == ids(exact)
    narrow = dense.search(db, queries[0], model, k=10, settings=RETRIEVAL.but(dense_exact_max=0, dense_cut_pool=10))
    assert len(narrow) == 10 and narrow[0].node_id == exact[0].node_id


def test_sign_bits_pad_dimensions_that_are_not_a_multiple_of_64():
    rng = np.random.default_rng(3)
    matrix = rng.normal(size=(50, 70)).astype(np.float32)
    matrix /= np.linalg.norm(matrix, axis=1, keepdims=True)
    codes = vector_file.sign_codes(matrix)
    assert codes.shape == (2, 50)
    bits = np.unpackbits(codes.T.copy().view(np.uint8), axis=1)
    np.testing.assert_array_equal(bits[:, :70], matrix > 0)
    assert not bits[:, 70:].any()
