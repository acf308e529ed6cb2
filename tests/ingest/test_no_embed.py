"""`longqa ingest --no-embed`: documents are stored searchable by BM25 at once, without leaf
vectors; `longqa reindex` then gives exactly the missing leaves their vectors.

Real command in a subprocess, real store, the real default embedder (embedded ONNX), a real PDF."""

from __future__ import annotations

import re
import sqlite3
from pathlib import Path

import pytest

from tests.command import run, run_json
from tests.pdfgen import H, P, make_pdf

NOTE = "stored without vectors, so BM25 alone finds them: `longqa reindex` embeds them"
QUESTION = "When does a relief valve lift and reseat?"  # answered in the PDF only
# Every leaf of these documents is one section's paragraph: two leaves each.
LEAVES_EACH = 2


@pytest.fixture
def documents(tmp_path: Path) -> list[Path]:
    pumps = tmp_path / "pumps.md"
    pumps.write_text(
        "# Pump maintenance\n\n## Inspection\n\nThe coolant pumps are inspected every 14 days by the shift "
        "engineer, who records bearing temperature and vibration.\n\n## Lubrication\n\nBearings of the "
        "feedwater pumps take lithium grease every 90 days; overgreasing raises their temperature.\n",
        encoding="utf-8",
    )
    valves = make_pdf(
        tmp_path / "valves.pdf",
        [[H("Relief valves"), P("Each relief valve lifts at 17.2 bar and reseats at 15.8 bar; the lift test "
                                "is repeated after every outage.")],
         [H("Isolation valves"), P("Isolation valves are stroked quarterly and their closing time must stay "
                                   "under 12 seconds.")]],
        toc=[[1, "Relief valves", 1], [1, "Isolation valves", 2]], title="Valve handbook",
    )
    return [pumps, valves]


def one(db_path: Path, sql: str, *args):
    with sqlite3.connect(db_path) as conn:
        return conn.execute(sql, args).fetchone()[0]


def leaves(db_path: Path) -> int:
    return one(db_path, "SELECT count(*) FROM nodes WHERE kind = 'paragraph'")


def vectors(db_path: Path) -> int:
    return one(db_path, "SELECT count(*) FROM embeddings")


def vector_version(db_path: Path) -> int:
    """Bumped once for every vector written or removed (store migration m002)."""
    return one(db_path, "SELECT version FROM vector_state")


def test_no_embed_stores_documents_searchable_by_bm25_without_vectors(documents, db_path):
    result = run("ingest", "--no-embed", *documents, db=db_path)
    assert result.returncode == 0, result.stderr
    stored = LEAVES_EACH * len(documents)
    assert result.stderr.splitlines() == ["2 added", f"{stored} leaves are {NOTE}"]
    assert leaves(db_path) == stored and vectors(db_path) == 0
    # Every node is in the full-text index, the PDF's passage among them.
    assert one(db_path, "SELECT count(*) FROM nodes_fts_docsize") == one(db_path, "SELECT count(*) FROM nodes")
    assert one(db_path, "SELECT count(*) FROM nodes_fts WHERE nodes_fts MATCH 'reseats'") == 1
    assert one(db_path, "SELECT count(*) FROM nodes_fts WHERE nodes_fts MATCH 'lithium'") == 1


def test_no_embed_never_loads_the_embedder_and_json_counts_the_leaves(documents, db_path):
    # An embedder that cannot be loaded: the run succeeds only if nothing tries to.
    result, out = run_json("ingest", "--no-embed", *documents, "--embed-model", "/nonexistent/embedder.gguf",
                           db=db_path)
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""  # stdout holds the one JSON document; the count is in it
    assert [(d["status"], d["embedded"], d["leaves_without_vectors"]) for d in out["documents"]] == [
        ("added", 0, LEAVES_EACH), ("added", 0, LEAVES_EACH)]
    assert out["leaves_without_vectors"] == LEAVES_EACH * len(documents) and out["failed"] == 0
    assert vectors(db_path) == 0


def test_ask_answers_by_bm25_from_a_store_without_any_vectors(documents, db_path):
    assert run("ingest", "--no-embed", *documents, db=db_path).returncode == 0
    result, out = run_json("ask", QUESTION, "--context-only", db=db_path)
    assert result.returncode == 0, result.stderr
    assert any("lifts at 17.2 bar" in passage["text"] for passage in out["context"])
    assert any(note.startswith("dense retrieval off: the store has no vectors yet") for note in out["notes"])


def test_ask_notes_the_leaves_without_vectors_beside_embedded_ones(documents, db_path):
    pumps, valves = documents
    assert run("ingest", pumps, db=db_path).returncode == 0  # embedded
    assert run("ingest", "--no-embed", valves, db=db_path).returncode == 0
    assert (leaves(db_path), vectors(db_path)) == (2 * LEAVES_EACH, LEAVES_EACH)
    result, out = run_json("ask", QUESTION, "--context-only", db=db_path)
    assert result.returncode == 0, result.stderr
    assert any("lifts at 17.2 bar" in passage["text"] for passage in out["context"])
    assert any(note.startswith(f"{LEAVES_EACH} leaves in 1 document(s) have no vectors yet, so BM25 alone ranks them")
               for note in out["notes"])


def test_a_question_about_the_leaves_without_vectors_is_judged_by_its_words(documents, db_path):
    # Beside embedded documents, dense search is on but blind to the unembedded one: a question
    # only it answers, most but not all of whose words it holds, is judged as in a store without
    # vectors (enough of its words), not refused for the cosine it cannot have.
    pumps, valves = documents
    assert run("ingest", pumps, db=db_path).returncode == 0
    assert run("ingest", "--no-embed", valves, db=db_path).returncode == 0
    asked = "At what pressure does a relief valve lift?"  # "pressure" is nowhere in the documents
    result, out = run_json("ask", asked, "--context-only", db=db_path)
    assert result.returncode == 0, result.stderr
    assert any("lifts at 17.2 bar" in passage["text"] for passage in out["context"])
    # Once embedded, the cosine speaks for it as for any other.
    assert run("reindex", db=db_path).returncode == 0
    result, out = run_json("ask", asked, "--context-only", db=db_path)
    assert result.returncode == 0 and out["analysis"]["relevant"]["max_cosine"] >= 0.42, result.stderr


def test_unchanged_files_are_skipped_unembedded_until_an_ingest_that_embeds(documents, db_path):
    assert run("ingest", "--no-embed", *documents, db=db_path).returncode == 0
    version = vector_version(db_path)

    result, out = run_json("ingest", "--no-embed", *documents, db=db_path)
    assert result.returncode == 0, result.stderr
    assert [(d["status"], d["embedded"], d["leaves_without_vectors"]) for d in out["documents"]] == [
        ("skipped", 0, LEAVES_EACH), ("skipped", 0, LEAVES_EACH)]
    assert vectors(db_path) == 0 and vector_version(db_path) == version

    # A store with no vectors records no embedder yet: a plain ingest takes it and completes them.
    result, out = run_json("ingest", *documents, db=db_path)
    assert result.returncode == 0, result.stderr
    assert [(d["status"], d["embedded"], d["leaves_without_vectors"]) for d in out["documents"]] == [
        ("skipped", LEAVES_EACH, 0), ("skipped", LEAVES_EACH, 0)]
    assert out["leaves_without_vectors"] == 0 and vectors(db_path) == leaves(db_path) == 2 * LEAVES_EACH


def test_reindex_embeds_the_missing_leaves_once(documents, db_path):
    assert run("ingest", "--no-embed", *documents, db=db_path).returncode == 0

    result = run("reindex", db=db_path)
    assert result.returncode == 0, result.stderr
    lines = result.stderr.splitlines()
    assert [re.sub(r"\d+\.\d s", "T s", line) for line in lines] == [
        f"reindexed: {path.resolve()} ({LEAVES_EACH} leaves, T s)" for path in documents] + ["2 reindexed"]
    assert vectors(db_path) == leaves(db_path) == 2 * LEAVES_EACH
    assert one(db_path, "SELECT count(DISTINCT model) FROM embeddings") == 1

    version = vector_version(db_path)
    result, out = run_json("reindex", db=db_path)
    assert result.returncode == 0, result.stderr
    assert (out["reindexed"], out["current"]) == (0, 2)
    assert [d["embedded"] for d in out["documents"]] == [0, 0]
    assert vector_version(db_path) == version  # not one vector written again


def test_reindex_completes_a_partly_embedded_document_without_re_embedding_the_rest(tmp_path, db_path):
    manual = tmp_path / "manual.md"
    manual.write_text("# Manual\n\n" + "\n\n".join(
        f"## Step {i}\n\nStep {i} checks gauge {i} against its limit of {10 * i} units." for i in range(6)),
        encoding="utf-8")
    assert run("ingest", manual, db=db_path).returncode == 0
    assert vectors(db_path) == leaves(db_path) == 6
    with sqlite3.connect(db_path) as conn:  # an embedding cut short: two leaves lost their vectors
        conn.execute("DELETE FROM embeddings WHERE node_id IN (SELECT node_id FROM embeddings ORDER BY node_id LIMIT 2)")
    version = vector_version(db_path)

    result = run("reindex", db=db_path)
    assert result.returncode == 0, result.stderr
    assert re.fullmatch(rf"reindexed: {re.escape(str(manual.resolve()))} \(2 of 6 leaves, \d+\.\d s\)",
                        result.stderr.splitlines()[0])
    assert vector_version(db_path) == version + 2  # two vectors written, none removed or rewritten
    assert vectors(db_path) == leaves(db_path) == 6


def test_graph_with_no_embed_is_a_usage_error(documents, db_path):
    result = run("ingest", "--graph", "--no-embed", *documents, db=db_path)
    assert result.returncode == 2
    assert result.stderr.count("\n") == 1 and result.stderr.startswith("longqa: usage: Invalid value for --graph: ")
    assert "--no-embed" in result.stderr and "`longqa reindex`" in result.stderr and "Traceback" not in result.stderr
    assert not db_path.exists()
