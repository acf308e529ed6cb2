"""The information-point graph (`ingest --graph`, `inspect graph`, `ask --search graph`, `rm`)
with the real default models on the repository's sample handbook.

Slow: llama.cpp models load in each subprocess; run with `pytest -m models tests/graph/test_information_points.py`.
"""

from __future__ import annotations

import sqlite3
from collections import defaultdict
from pathlib import Path

import pytest

from longqa.store import open_db
from tests.command import run, run_json

pytestmark = pytest.mark.models
REPO = Path(__file__).resolve().parents[2]
SAMPLE = REPO / "examples" / "kestrel_valley_handbook.pdf"
QUESTION = "How long can the standby generators run the works before the diesel runs out?"


def graph_rows(db: Path) -> tuple[list, list, list]:
    conn = sqlite3.connect(db)
    try:
        return (conn.execute("SELECT doc_id, sha256, points, edges, model, levels FROM graph_docs").fetchall(),
                conn.execute("SELECT id, doc_id, level, ord, leaf_id, text, tokens, vector FROM graph_nodes "
                             "ORDER BY id").fetchall(),
                conn.execute("SELECT parent, child, weight FROM graph_edges ORDER BY parent, child").fetchall())
    finally:
        conn.close()


@pytest.fixture(scope="module")
def graph_store(tmp_path_factory) -> Path:
    db = tmp_path_factory.mktemp("graph") / "store.db"
    result, data = run_json("ingest", "--graph", SAMPLE, db=db)
    assert result.returncode == 0, result.stderr
    assert data["documents"][0]["graph"] == "built"
    return db


def test_graph_has_points_from_the_text_and_normalised_edges(graph_store):
    result, graph = run_json("inspect", "graph", SAMPLE.name, db=graph_store)
    assert result.returncode == 0, result.stderr
    assert graph["points"] == "extractive" and graph["edges"] == "attention"
    assert graph["model"] == "gemma-3-270m-q4_k_m" and graph["generated_tokens"] == 0
    nodes = {n["id"]: n for n in graph["nodes"]}
    by_level = defaultdict(list)
    for node in nodes.values():
        by_level[node["level"]].append(node)
    assert graph["levels"] >= 1 and len(by_level[1]) > 0
    leaf_text = {n["leaf_id"]: " ".join(n["text"].split()) for n in by_level[0]}
    for level in range(1, graph["levels"] + 1):
        for point in by_level[level]:
            # extractive: the point is a sentence of the leaf it is cited to
            assert point["text"] in leaf_text[point["leaf_id"]]
            weights = [e["weight"] for e in point["edges"]]
            assert weights and sum(weights) == pytest.approx(1.0, abs=1e-3)
            assert all(nodes[e["child"]]["level"] == level - 1 for e in point["edges"])
    # each level is a fraction of the one below (GARLIC: about 20-30 %)
    level_tokens = [sum(n["tokens"] for n in by_level[level]) for level in range(graph["levels"] + 1)]
    assert all(upper < lower * 0.5 for lower, upper in zip(level_tokens, level_tokens[1:]))
    shown = run("inspect", "graph", SAMPLE.name, db=graph_store)
    assert shown.returncode == 0 and "level 1:" in shown.stdout and "→ #" in shown.stdout


def test_graph_survives_reingest_unchanged(graph_store):
    before = graph_rows(graph_store)
    result, data = run_json("ingest", "--graph", SAMPLE, db=graph_store)
    assert result.returncode == 0, result.stderr
    assert data["documents"][0]["status"] == "skipped" and data["documents"][0]["graph"] == "kept"
    assert graph_rows(graph_store) == before


def test_ask_search_graph_answers_with_cited_pages(graph_store):
    # the first pick already answers this question (PECAN would stop there): a patience of 10 lets the
    # search go on past the retrieval's best leaves (the seeds) to where the graph leads
    result, data = run_json("ask", QUESTION, "--search", "graph", "--budget", "1000", "--patience", "10",
                            db=graph_store)
    assert result.returncode == 0, result.stderr
    assert data["answer"] and data["citations"]
    assert any(step["action"] == "graph-start" for step in data["steps"])
    reasons = [s["reason"] for s in data["steps"] if s["action"] == "add"]
    assert reasons[0] == "seed" and "graph" in reasons and reasons.index("graph") > reasons.index("seed")
    assert data["context_tokens"] <= 1000
    assert any("52 hours" in item["text"] for item in data["context"])
    assert all(c["page_start"] >= 1 for c in data["citations"])


def test_cosine_edges_replace_attention_ones(tmp_path):
    db = tmp_path / "cosine.db"
    result, data = run_json("ingest", "--graph", "--edges", "cosine", SAMPLE, db=db)
    assert result.returncode == 0, result.stderr
    result, graph = run_json("inspect", "graph", "1", db=db)
    assert graph["edges"] == "cosine" and graph["model"] == ""
    for point in (n for n in graph["nodes"] if n["level"] >= 1):
        assert sum(e["weight"] for e in point["edges"]) == pytest.approx(1.0, abs=1e-3)
    # asking for attention edges afterwards rebuilds the graph (the stored one is of another kind)
    result, data = run_json("ingest", "--graph", SAMPLE, db=db)
    assert data["documents"][0]["graph"] == "built"


def test_rm_removes_the_graph(tmp_path, graph_store):
    db = tmp_path / "copy.db"
    db.write_bytes(graph_store.read_bytes())
    assert graph_rows(db)[1]
    result = run("rm", SAMPLE.name, db=db)
    assert result.returncode == 0, result.stderr
    assert graph_rows(db) == ([], [], [])
    missing = run("inspect", "graph", "1", db=db)
    assert missing.returncode != 0 and "Traceback" not in missing.stderr


def test_no_graph_is_one_clear_line_and_ask_falls_back(tmp_path):
    db = tmp_path / "plain.db"
    assert run("ingest", SAMPLE, db=db).returncode == 0
    missing = run("inspect", "graph", SAMPLE.name, db=db)
    assert missing.returncode != 0 and "ingest --graph" in missing.stderr and "Traceback" not in missing.stderr
    result, data = run_json("ask", QUESTION, "--search", "graph", "--context-only", "--budget", "800", db=db)
    assert result.returncode == 0, result.stderr
    assert any("no graph" in note for note in data["notes"]) and data["context"]
    assert open_db(db, readonly=True).execute("SELECT count(*) FROM graph_docs").fetchone()[0] == 0


STORY = [
    "Captain Elena Marsh sailed the schooner Petrel out of Dunmore harbour on the morning of 4 May 1871, "
    "carrying salt cod and forty barrels of whale oil bound for Lisbon. The crew numbered eleven men, "
    "most of them from the fishing villages along the northern coast. ",
    "Three days out, a gale from the south-west split the mainsail and drove the Petrel towards the Azores. "
    "The cook, Tobias Reyne, broke his arm when a barrel came loose in the hold, and the mate took over "
    "his duties in the galley for the rest of the voyage. ",
    "The schooner anchored at Ponta Delgada on 15 May for repairs. A sailmaker named Joaquim Furtado "
    "sewed a new mainsail in four days and charged the captain twelve gold coins, which she paid from "
    "the ship's own strongbox rather than from the cargo money. ",
    "The Petrel reached Lisbon on 29 May. Marsh sold the whale oil to a lamp merchant in the Alfama "
    "district for twice the price it fetched at home, and she bought cork and port wine for the return "
    "journey to Dunmore, where the ship arrived safely in late June. ",
]


def test_generated_points_are_kept_only_when_faithful(tmp_path):
    from longqa.graph.points import faithfulness

    source = tmp_path / "voyage.txt"
    source.write_text("\n\n".join(paragraph * 3 for paragraph in STORY), encoding="utf-8")
    db = tmp_path / "generated.db"
    result, data = run_json("ingest", "--graph", "--points", "generated", source, db=db)
    assert result.returncode == 0, result.stderr
    result, graph = run_json("inspect", "graph", "1", db=db)
    assert graph["points"] == "generated" and graph["levels"] >= 1
    leaves = {n["leaf_id"]: n["text"] for n in graph["nodes"] if n["level"] == 0}
    points = [n for n in graph["nodes"] if n["level"] >= 1]
    assert points
    assert graph["generated_tokens"] <= 0.3 * graph["input_tokens"] * graph["levels"]
    for point in (p for p in points if p["level"] == 1):  # a kept bullet is faithful to its group;
        # a fallback is a sentence of it
        assert faithfulness(point["text"], list(leaves.values())) >= 0.8
        # and it is cited to a leaf that holds most of its words
        assert faithfulness(point["text"], [leaves[point["leaf_id"]]]) >= 0.5
