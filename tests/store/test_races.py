"""Another process changing the store while one works on it: a graph over replaced leaves, `rm` or
`--force` during an ask, a graph batch and a reindex. Real stores, real files, the real `longqa rm`
in its own process; the fake models (tests/fakes.py) only pick the moment."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from longqa.graph.build import GraphBuilder
from longqa.graph.settings import DEFAULT as GRAPH_DEFAULT
from longqa.ingest import Ingestor
from longqa.reindex import reindex
from longqa.store import open_db, snapshot
from longqa.store.graph import graph_is_current, graph_of, graph_summary
from longqa.store.nodes import load_tree
from tests.ask_support import make_pipeline, reactor_handbook
from tests.command import run
from tests.fakes import FakeEmbedder, HookedEmbedder

REPO = Path(__file__).resolve().parents[2]
QUESTION = "How fast does the primary coolant loop move borated water?"
GRAPH = GRAPH_DEFAULT.but(edges="cosine", points="extractive")


def graph_builder(db, embedder) -> GraphBuilder:
    return GraphBuilder(db, embedder, None, settings=GRAPH)


def handbook(tmp_path: Path, name: str = "handbook.md") -> Path:
    path = tmp_path / name
    path.write_text(reactor_handbook(), encoding="utf-8")
    return path


def table_count(db_path: Path, table: str) -> int:
    with sqlite3.connect(db_path) as conn:
        return conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0]


# -- a graph belongs to the leaves it was built from --------------------------------------------------

def test_a_forced_reingest_drops_the_graph_and_the_next_graph_run_rebuilds_it(tmp_path, db_path):
    db, embedder, path = open_db(db_path), FakeEmbedder(), handbook(tmp_path)
    first = Ingestor(db=db, embedder=embedder, graph=graph_builder(db, embedder)).ingest(path)
    assert first.graph == "built" and graph_is_current(db, first.id)

    again = Ingestor(db=db, embedder=embedder, force=True).ingest(path)  # same bytes, new leaves
    assert again.status == "updated" and again.id == first.id
    assert graph_of(db, first.id) is None and graph_summary(db) == {}
    assert table_count(db_path, "graph_nodes") == 0  # no node left pointing at a deleted leaf

    rebuilt = Ingestor(db=db, embedder=embedder, force=True, graph=graph_builder(db, embedder)).ingest(path)
    assert rebuilt.graph == "built"  # was "kept": the graph was judged by the file's hash alone
    leaves = {n.id for n in _leaves(db, first.id)}
    with sqlite3.connect(db_path) as conn:
        graph_leaves = {row[0] for row in conn.execute("SELECT leaf_id FROM graph_nodes WHERE level = 0")}
    assert graph_leaves and graph_leaves <= leaves


def _leaves(db, doc_id: int):
    from longqa.structure.tree import walk

    return [n for n in walk(load_tree(db, doc_id)) if n.is_leaf]


@pytest.mark.parametrize("search", ["graph", "auto"])
def test_ask_on_a_graph_over_replaced_leaves_falls_back_to_the_tree(tmp_path, db_path, monkeypatch, search):
    """A store written by the version before can hold a graph whose leaves a forced re-ingest
    replaced (that version kept it). Once migrated the graph is stale, and the search reads the
    tree; it used to fail on the missing leaves (a zero-size array)."""
    from longqa.store import db as store_db
    from longqa.store.migrations import MIGRATIONS

    # the version before the graph leaf keys, with the later columns that ingest writes today
    monkeypatch.setattr(store_db, "MIGRATIONS", MIGRATIONS[:3] + MIGRATIONS[4:])
    db, embedder, path = open_db(db_path), FakeEmbedder(), handbook(tmp_path)
    doc_id = Ingestor(db=db, embedder=embedder).ingest(path).id
    graph = _built_not_stored(graph_builder(db, embedder), doc_id, monkeypatch)
    Ingestor(db=db, embedder=embedder, force=True).ingest(path)  # new leaves
    _store_unkeyed(db.conn, graph)  # what that version left: the graph over the old leaves
    db.conn.close()
    monkeypatch.setattr(store_db, "MIGRATIONS", MIGRATIONS)

    db = open_db(db_path)  # migrated
    assert not graph_is_current(db, doc_id) and graph_summary(db)[doc_id]["current"] == 0
    result = make_pipeline(db, search=search).answer(QUESTION)
    assert result.answer and any("1,200 litres" in p.text for p in result.passages)
    if search == "graph":
        assert any("no graph for document" in note for note in result.refined.notes)


def test_a_graph_whose_leaves_are_all_still_there_stays_current_through_the_migration(tmp_path, db_path,
                                                                                      monkeypatch):
    from longqa.store import db as store_db
    from longqa.store.migrations import MIGRATIONS

    # the version before the graph leaf keys, with the later columns that ingest writes today
    monkeypatch.setattr(store_db, "MIGRATIONS", MIGRATIONS[:3] + MIGRATIONS[4:])
    db, embedder, path = open_db(db_path), FakeEmbedder(), handbook(tmp_path)
    doc_id = Ingestor(db=db, embedder=embedder).ingest(path).id
    _store_unkeyed(db.conn, _built_not_stored(graph_builder(db, embedder), doc_id, monkeypatch))
    db.conn.close()
    monkeypatch.setattr(store_db, "MIGRATIONS", MIGRATIONS)
    db = open_db(db_path)
    assert graph_is_current(db, doc_id)  # not rebuilt for nothing after the upgrade
    assert db.execute("PRAGMA user_version").fetchone()[0] == len(MIGRATIONS)


def _built_not_stored(builder: GraphBuilder, doc_id: int, monkeypatch):
    import longqa.graph.build as build_module

    kept, original = [], build_module.save_graph
    monkeypatch.setattr(build_module, "save_graph", lambda db, graph: kept.append(graph) or True)
    builder.build(doc_id, force=True)
    monkeypatch.setattr(build_module, "save_graph", original)
    return kept[0]


def _store_unkeyed(conn, graph) -> None:
    """The graph's rows as the version before wrote them (no leaf key column)."""
    conn.execute("INSERT INTO graph_docs (doc_id, sha256, points, edges, model, embed_model, levels, input_tokens, "
                 "generated_tokens, seconds, created) VALUES (?,?,?,?,?,?,?,0,0,0,'')",
                 (graph.doc_id, graph.sha256, graph.points, graph.edges, graph.model, graph.embed_model, graph.levels))
    ids = [conn.execute("INSERT INTO graph_nodes (doc_id, level, ord, leaf_id, text, tokens, vector) "
                        "VALUES (?,?,?,?,?,?,?)", (graph.doc_id, n.level, n.ord, n.leaf_id, n.text, n.tokens,
                                                   n.vector.tobytes())).lastrowid for n in graph.nodes]
    conn.executemany("INSERT INTO graph_edges (parent, child, weight) VALUES (?,?,?)",
                     [(ids[p], ids[c], w) for p, c, w in graph.edge_list if w > 0])


# -- an ask reads one snapshot -------------------------------------------------------------------------

READER = """
import json, sys
from pathlib import Path
from longqa.store import open_db
from tests.ask_support import make_pipeline
from tests.fakes import PausingGenerator

db = open_db(sys.argv[1], readonly=True)
pipeline = make_pipeline(db, PausingGenerator(Path(sys.argv[2]), Path(sys.argv[3])))
result = pipeline.answer(sys.argv[4])  # the pipeline reads one snapshot itself
print(json.dumps({"answer": result.answer, "passages": [p.text for p in result.passages]}))
"""


@pytest.mark.parametrize("change", ["rm", "force"])
def test_an_ask_in_flight_reads_the_store_as_it_was_when_it_began(tmp_path, db_path, change):
    """`longqa rm` (its own process) or a forced re-ingest lands while an ask holds its retrieval:
    the ask answers from the store as it was, never "no such document"."""
    db, path = open_db(db_path), handbook(tmp_path)
    Ingestor(db=db, embedder=FakeEmbedder()).ingest(path)
    ready, go = tmp_path / "ready", tmp_path / "go"
    reader = subprocess.Popen([sys.executable, "-c", READER, str(db_path), str(ready), str(go), QUESTION],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=REPO,
                              env={**os.environ, "PYTHONPATH": str(REPO)})
    try:
        _wait_for(ready, reader)
        if change == "rm":
            removed = run("rm", path.name, db=db_path)
            assert removed.returncode == 0, removed.stderr
        else:
            assert Ingestor(db=db, embedder=FakeEmbedder(), force=True).ingest(path).status == "updated"
        go.touch()
        out, err = reader.communicate(timeout=120)
    finally:
        reader.kill()
    assert reader.returncode == 0, err
    answer = json.loads(out)
    assert answer["answer"] and any("1,200 litres" in text for text in answer["passages"])


def _wait_for(flag: Path, process: subprocess.Popen) -> None:
    import time

    deadline = time.monotonic() + 120
    while not flag.exists():
        assert process.poll() is None, process.communicate()[1]
        assert time.monotonic() < deadline, "the reader never reached its pause"
        time.sleep(0.02)


def test_a_snapshot_keeps_a_removed_document_readable_to_its_end(db_path, tmp_path):
    db, path = open_db(db_path), handbook(tmp_path)
    doc_id = Ingestor(db=db, embedder=FakeEmbedder()).ingest(path).id
    reader = open_db(db_path, readonly=True)
    with snapshot(reader):
        before = len(_leaves(reader, doc_id))
        assert run("rm", str(doc_id), db=db_path).returncode == 0
        assert len(_leaves(reader, doc_id)) == before  # the whole document, as it was
    with pytest.raises(Exception, match="no such document"):
        load_tree(reader, doc_id)  # after the snapshot: the store as it is now


# -- a batch goes on when another process removes or replaces one of its documents ---------------------

def test_rm_during_a_graph_batch_skips_that_graph_and_stores_the_rest(tmp_path, db_path):
    first, second = handbook(tmp_path, "a.md"), handbook(tmp_path, "b.md")
    second.write_text(reactor_handbook().replace("Harbor Point", "Ridge Hill"), encoding="utf-8")
    db = open_db(db_path)

    def remove_first() -> None:  # `longqa rm a.md` while a.md's graph is being built
        removed = run("rm", "a.md", db=db_path)
        assert removed.returncode == 0, removed.stderr

    embedder = HookedEmbedder(remove_first, at=2)  # call 1: a.md's leaves; call 2: its graph's points
    ingestor = Ingestor(db=db, embedder=embedder, graph=graph_builder(db, embedder))
    results = [ingestor.ingest(first), ingestor.ingest(second)]
    assert [r.status for r in results] == ["added", "added"]
    assert results[0].graph == "skipped" and "another process" in results[0].warnings[-1]
    assert results[1].graph == "built" and graph_is_current(db, results[1].id)
    with sqlite3.connect(db_path) as conn:
        assert [row[0] for row in conn.execute("SELECT path FROM documents")] == [str(second.resolve())]
        assert conn.execute("PRAGMA foreign_key_check").fetchall() == []


def test_reindex_passes_over_a_document_reingested_meanwhile_and_goes_on(tmp_path, db_path):
    first, second = handbook(tmp_path, "a.md"), handbook(tmp_path, "b.md")
    db = open_db(db_path)
    ingestor = Ingestor(db=db, embedder=FakeEmbedder())
    ids = [ingestor.ingest(first).id, ingestor.ingest(second).id]
    writer = open_db(db_path)  # another connection, as `ingest --force` in another process has

    def reingest_first() -> None:
        assert Ingestor(db=writer, embedder=FakeEmbedder(), force=True).ingest(first).status == "updated"

    results = reindex(db, HookedEmbedder(reingest_first, at=1, name="other-embedder"), force=True)
    assert [(r.id, r.status) for r in results] == [(ids[0], "changed"), (ids[1], "reindexed")]
    with sqlite3.connect(db_path) as conn:
        assert conn.execute("PRAGMA foreign_key_check").fetchall() == []
        by_doc = dict(conn.execute("SELECT n.doc_id, group_concat(DISTINCT e.model) FROM embeddings e "
                                   "JOIN nodes n ON n.id = e.node_id GROUP BY n.doc_id").fetchall())
    assert by_doc == {ids[0]: FakeEmbedder.name, ids[1]: "other-embedder"}


def test_an_ask_while_the_only_document_is_rewritten_says_only_what_is_true(tmp_path, db_path):
    # An ask landing between `ingest --force` storing the new tree and its vectors once said the
    # documents "were ingested without an embedder": they were not.
    db, path = open_db(db_path), handbook(tmp_path)
    Ingestor(db=db, embedder=FakeEmbedder()).ingest(path)
    seen = []

    def ask_now():
        pipeline = make_pipeline(open_db(db_path, readonly=True))
        seen.extend(pipeline.retrieve_context(QUESTION).notes)

    result = Ingestor(db=db, embedder=HookedEmbedder(ask_now), force=True).ingest(path)
    assert result.status == "updated" and seen, seen
    dense = [note for note in seen if note.startswith("dense retrieval off")]
    assert dense and "without an embedder)" not in dense[0] and "an ingest still embedding its leaves" in dense[0], seen
