"""Replay the concurrency and crash attacks on the real `longqa` command for a bounded number of
rounds, and count what went wrong.

    python bench/attack.py [--rounds 3] [--asks 4] [--keep DIR] [--json]

Each round, in a fresh store of generated manuals (nothing downloaded):
- kill -9 during embedding: `longqa ingest DIR` is killed once some documents are stored; the
  store must then pass SQLite's integrity and foreign-key checks, every vector must be its own
  leaf's (re-embedded and compared), and the memory-mapped vector file must match the store;
- `rm` and `--force` during asks: `--asks` asks (`ask --context-only`) start, and `longqa rm` or
  `longqa ingest --force` of the document they ask about lands while they run; each ask must end
  with an answer (0) or "nothing relevant" (4), never an error;
- reindex against ingest: `longqa reindex --force` runs beside `longqa ingest --force` of every
  document, and `longqa ingest --graph --edges cosine --force` of every document while three of
  them are removed, each as its graph is built: each batch must finish (exit 0) and store what
  was not removed.

Printed: asks failed, stores unsound, vectors misplaced, batches stopped (all 0 when the store
holds), the rounds' seconds and the load average, since the machine may be shared.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
TOPICS = ["pumps", "valves", "boilers", "fans", "chillers", "filters", "meters", "relays"]
QUESTION = "How often are the {topic} inspected?"


def manual(topic: str, paragraphs: int = 40) -> str:
    """A maintenance manual of `paragraphs` paragraphs in sections, one inspection fact."""
    rng = random.Random(topic)
    parts = [f"# {topic.title()} Maintenance Manual\n"]
    for section in range(paragraphs // 5):
        parts.append(f"## Section {section + 1}: {topic} care\n")
        for i in range(5):
            words = " ".join(rng.choice(["routine", "check", "record", "clean", "replace", "seal", "log"])
                             for _ in range(40))
            parts.append(f"Paragraph {i} on {topic}: {words}.\n")
    parts.append(f"## Inspection\n\nThe {topic} are inspected every {rng.randint(2, 11)} weeks by the site engineer.\n")
    return "\n".join(parts)


def longqa(*args, db: Path, **options) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "longqa", *map(str, args), "-d", str(db)], cwd=REPO,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **options)


def finish(process: subprocess.Popen, timeout: float = 600) -> tuple[int, str]:
    try:
        _, err = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        _, err = process.communicate()
    return process.returncode, err.strip().splitlines()[-1] if err.strip() else ""


def documents(db: Path) -> list[tuple[int, str]]:
    try:
        with sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=30) as conn:
            return conn.execute("SELECT id, path FROM documents ORDER BY id").fetchall()
    except sqlite3.DatabaseError:
        return []


def unsound(db: Path) -> list[str]:
    """What SQLite's own checks find wrong with the store (empty when sound)."""
    with sqlite3.connect(db, timeout=30) as conn:
        problems = [row[0] for row in conn.execute("PRAGMA integrity_check") if row[0] != "ok"]
        problems += [f"foreign key: {row}" for row in conn.execute("PRAGMA foreign_key_check")]
    return problems


def misplaced(db: Path, embedder) -> int:
    """Stored vectors that are not their own leaf's, in SQLite or in the mapped file."""
    from longqa.embedding import embedding_text
    from longqa.store import open_db
    from longqa.store.vectors import forget_vectors, load_vectors

    from longqa.errors import StoreError

    try:
        store = open_db(db, readonly=True)
    except StoreError:  # killed before its first document: nothing stored, nothing misplaced
        return 0
    rows = store.execute("SELECT n.id, n.path, n.text, e.vector FROM embeddings e JOIN nodes n ON n.id = e.node_id "
                         "WHERE e.model = ?", [embedder.name]).fetchall()
    if not rows:
        return 0
    import numpy as np

    fresh = embedder.embed([embedding_text(path, text) for _, path, text, _ in rows])
    stored = np.stack([np.frombuffer(blob, np.float32) for *_, blob in rows])
    wrong = int(np.sum(np.sum(fresh * stored, axis=1) < 0.99))
    forget_vectors()
    matrix = load_vectors(store, embedder.name)  # the mapped file, rebuilt if it no longer mirrors
    by_id = {node_id: i for i, (node_id, *_rest) in enumerate(rows)}
    for row, node_id in enumerate(matrix.node_ids):
        i = by_id.get(int(node_id))
        if i is None or float(matrix.matrix[row] @ (stored[i] / np.linalg.norm(stored[i]))) < 0.99:
            wrong += 1
    store.conn.close()
    return wrong


def kill_during_embedding(folder: Path, db: Path, counts: dict, embedder) -> None:
    process = longqa("ingest", folder, db=db)
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline and process.poll() is None and len(documents(db)) < 2:
        time.sleep(0.05)
    time.sleep(random.uniform(0, 0.5))  # somewhere in the next document's embedding
    if process.poll() is None:
        os.kill(process.pid, signal.SIGKILL)
    process.communicate()
    counts["stores unsound"] += bool(unsound(db))
    counts["vectors misplaced"] += misplaced(db, embedder)
    code, line = finish(longqa("ingest", folder, db=db))  # resumes
    counts["batches stopped"] += code != 0
    counts["stores unsound"] += bool(unsound(db))
    counts["vectors misplaced"] += misplaced(db, embedder)


def change_during_asks(folder: Path, db: Path, counts: dict, asks: int) -> None:
    for change in ("rm", "force"):
        topic = random.choice(TOPICS)
        target = folder / f"{topic}.md"
        code, _ = finish(longqa("ingest", target, db=db))
        running = [longqa("ask", "--context-only", QUESTION.format(topic=topic), db=db) for _ in range(asks)]
        time.sleep(random.uniform(1.0, 5.0))  # asks take ~7 s here: the change lands mid-ask
        if change == "rm":
            finish(longqa("rm", target, db=db))
        else:
            finish(longqa("ingest", "--force", target, db=db))
        for process in running:
            code, line = finish(process)
            counts["asks answered" if code == 0 else "asks nothing relevant" if code == 4 else "asks failed"] += 1
            if code not in (0, 4):
                counts["examples"].append(f"ask during {change}: exit {code}: {line}")
        counts["asks"] += asks
        counts["stores unsound"] += bool(unsound(db))


def batches_against_changes(folder: Path, db: Path, counts: dict) -> None:
    """`reindex --force` beside a forced re-ingest of every document, then `ingest --graph --force`
    of every document while three of them are removed, each as its graph is built."""
    reindex = longqa("reindex", "--force", db=db)
    time.sleep(random.uniform(0.5, 2.0))
    force = longqa("ingest", "--force", folder, db=db)
    for name, process in (("reindex", reindex), ("ingest --force", force)):
        code, line = finish(process)
        if code != 0:
            counts["batches stopped"] += 1
            counts["examples"].append(f"{name}: exit {code}: {line}")
    counts["stores unsound"] += bool(unsound(db))
    with sqlite3.connect(db) as conn:
        before = conn.execute("SELECT coalesce(max(id), 0) FROM nodes").fetchone()[0]
    graph = longqa("ingest", "--graph", "--edges", "cosine", "--points", "extractive", "--force", folder, db=db)
    removed = remove_while_graphed(db, graph, 3, before)
    code, line = finish(graph)
    stored = {Path(path).stem for _, path in documents(db)}
    missing = set(TOPICS) - set(removed) - stored
    if code != 0 or missing:
        counts["batches stopped"] += 1
        counts["examples"].append(f"ingest --graph beside rm: exit {code}: {line}; not stored: {sorted(missing)}")
    counts["stores unsound"] += bool(unsound(db))


def remove_while_graphed(db: Path, batch: subprocess.Popen, count: int, before: int) -> list[str]:
    """Remove up to `count` documents, each at the moment the batch builds its graph (stored again
    by the batch: node ids above `before`; its leaves all have vectors; no graph yet), from this
    process: `longqa rm` would start too late."""
    from longqa.store import open_db
    from longqa.store.documents import delete_document

    store, removed = open_db(db), []
    building = ("SELECT d.id, d.path FROM documents d WHERE NOT EXISTS (SELECT 1 FROM graph_docs g WHERE "
                "g.doc_id = d.id) AND EXISTS (SELECT 1 FROM nodes n WHERE n.doc_id = d.id AND n.id > ?) AND NOT EXISTS "
                "(SELECT 1 FROM nodes n LEFT JOIN embeddings e ON e.node_id = n.id WHERE n.doc_id = d.id "
                "AND n.kind = 'paragraph' AND e.node_id IS NULL)")
    while batch.poll() is None and len(removed) < count:
        row = store.execute(building, [before]).fetchone()
        if row is not None and Path(row[1]).stem not in removed:
            delete_document(store, row[0])
            removed.append(Path(row[1]).stem)
        time.sleep(0.01)
    store.conn.close()
    return removed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--asks", type=int, default=4, help="asks in flight per change")
    parser.add_argument("--keep", type=Path, help="work here (kept) instead of a temporary folder")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    from longqa.models.resolve import load_embedder

    embedder = load_embedder(None, None)
    counts = {"rounds": 0, "asks": 0, "asks answered": 0, "asks nothing relevant": 0, "asks failed": 0, "stores unsound": 0, "vectors misplaced": 0,
              "batches stopped": 0, "examples": []}
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="longqa-attack-") as scratch:
        work = args.keep or Path(scratch)
        for round_ in range(args.rounds):
            folder = work / f"round{round_}"
            folder.mkdir(parents=True, exist_ok=True)
            for topic in TOPICS:
                (folder / f"{topic}.md").write_text(manual(topic), encoding="utf-8")
            db = folder / "store.db"
            kill_during_embedding(folder, db, counts, embedder)
            change_during_asks(folder, db, counts, args.asks)
            batches_against_changes(folder, db, counts)
            counts["rounds"] += 1
    counts["seconds"] = round(time.perf_counter() - started, 1)
    counts["loadavg"] = Path("/proc/loadavg").read_text().split()[:3]
    if args.json:
        print(json.dumps(counts, indent=2))
        return
    for key, value in counts.items():
        if key != "examples":
            print(f"{key}: {value}")
    for example in counts["examples"][:10]:
        print(f"  {example}")


if __name__ == "__main__":
    main()
