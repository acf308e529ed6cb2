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
  was not removed;
- a slow-drip server: `ask --llm-url` against a server on 127.0.0.1 that answers its model list
  at once and everything else a byte a second (for at most DRIP_BYTES bytes), with
  LONGQA_LLM_TIMEOUT=DRIP_DEADLINE: the ask must end with exit 1 and a "timed out after" line
  within the deadline plus the command's start-up (START_UP_S);
- planted kept heads: in a models folder of its own (links to the real model files), an `ask`
  keeps its prompt heads' states, then each kept file is replaced by a pipe, a 1.2 GB sparse file
  and a link, in turn: each next `ask` must answer (0 or 4) within ASK_LIMIT_S, its peak memory
  must stay within KEPT_MEMORY_MIB of the first ask's, and a link must be replaced, never
  followed (its target unchanged).

Printed: asks failed, stores unsound, vectors misplaced, batches stopped, deadlines overrun,
kept-head attacks failed (all 0 when the store holds), the rounds' seconds and the load average,
since the machine may be shared.
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
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
TOPICS = ["pumps", "valves", "boilers", "fans", "chillers", "filters", "meters", "relays"]
QUESTION = "How often are the {topic} inspected?"
DRIP_DEADLINE = 5  # LONGQA_LLM_TIMEOUT for the slow-drip ask, seconds
DRIP_BYTES = 90  # the drip server stops after this many bytes (a byte a second)
START_UP_S = 8  # the command's start-up (imports, the store, the embedder) on a shared 2-core machine
ASK_LIMIT_S = 180  # one ask with the local generator, whatever is planted
KEPT_MEMORY_MIB = 300  # a planted kept head may cost no more than this over a normal ask's peak


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


class _DripHandler(BaseHTTPRequestHandler):
    """Answers GET /v1/models at once; any other request a byte a second, for DRIP_BYTES bytes."""

    def log_message(self, *args):
        pass

    def do_GET(self):
        if self.path == "/v1/models":
            body = b'{"data": [{"id": "drip", "max_model_len": 8192}]}'
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            return
        self._drip()

    def do_POST(self):
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        self._drip()

    def _drip(self):
        body = b'{"choices": [{"text": " every few weeks"}], "tokens": [1, 2, 3]}'
        answer = b"HTTP/1.1 200 OK\r\nContent-Length: " + str(len(body)).encode() + b"\r\n\r\n" + body
        try:
            for byte in answer[:DRIP_BYTES]:
                self.wfile.write(bytes([byte]))
                self.wfile.flush()
                time.sleep(1)
        except OSError:  # the client gave up: what it should do
            pass


def slow_drip(db: Path, counts: dict) -> None:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _DripHandler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.1}, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}/v1"
    try:
        started = time.monotonic()
        code, line = finish(longqa("ask", QUESTION.format(topic="pumps"), "--llm-url", url, db=db,
                                   env={**os.environ, "LONGQA_LLM_TIMEOUT": str(DRIP_DEADLINE)}), timeout=300)
        seconds = time.monotonic() - started
    finally:
        server.shutdown()
        server.server_close()
    counts["drip asks"] += 1
    if code != 1 or "timed out after" not in line or seconds > DRIP_DEADLINE + START_UP_S:
        counts["deadlines overrun"] += 1
        counts["examples"].append(f"slow drip: exit {code} after {seconds:.1f} s: {line}")
    counts["drip seconds"] = max(counts.get("drip seconds", 0.0), round(seconds, 1))


def _ask_measured(db: Path, env: dict) -> tuple[int, str, float, float]:
    """(exit code, last stderr line, seconds, peak memory MiB) of one `ask` with the generator,
    killed after ASK_LIMIT_S. Waited for with wait4, which gives that child's own peak."""
    with tempfile.TemporaryFile("w+") as err:
        started = time.monotonic()
        process = subprocess.Popen([sys.executable, "-m", "longqa", "ask", "--no-stream",
                                    QUESTION.format(topic="valves"), "-d", str(db)], cwd=REPO, env=env,
                                   stdout=subprocess.DEVNULL, stderr=err, text=True)
        while time.monotonic() < started + ASK_LIMIT_S:
            pid, status, usage = os.wait4(process.pid, os.WNOHANG)
            if pid:
                break
            time.sleep(0.2)
        else:
            process.kill()
            _, status, usage = os.wait4(process.pid, 0)
        process.returncode = code = os.waitstatus_to_exitcode(status)
        seconds = time.monotonic() - started
        err.seek(0)
        lines = err.read().strip().splitlines()
    return code, lines[-1] if lines else "", seconds, usage.ru_maxrss / 1024  # KiB on Linux


def planted_kept_heads(db: Path, work: Path, counts: dict) -> None:
    """An ask keeps its heads; then each kept file is replaced by a pipe, a huge sparse file and a
    link in turn, and the next ask must answer in time, in bounded memory, following no link."""
    from longqa import config
    from longqa.models.llama import KEPT_HEADS_DIR

    models = work / "models"
    models.mkdir(exist_ok=True)
    for real in config.models_dir().iterdir():  # the model files, linked: nothing assembled again
        if real.is_file() and not (models / real.name).exists():
            (models / real.name).symlink_to(real)
    env = {**os.environ, "LONGQA_MODELS_DIR": str(models)}
    code, line, _, normal = _ask_measured(db, env)
    heads = sorted((models / KEPT_HEADS_DIR).glob("*.kv"))
    if code not in (0, 4) or not heads:
        counts["kept-head attacks failed"] += 1
        counts["examples"].append(f"kept heads: the first ask: exit {code}, {len(heads)} heads kept: {line}")
        return
    target = work / "not-a-head.txt"
    target.write_text("never to be read as a state\n", encoding="utf-8")
    for plant in ("pipe", "huge", "link"):
        for head in heads:
            head.unlink(missing_ok=True)
            if plant == "pipe":
                os.mkfifo(head)
            elif plant == "huge":
                with open(head, "wb") as handle:
                    handle.truncate(1200 << 20)
            else:
                head.symlink_to(target)
        code, line, seconds, peak = _ask_measured(db, env)
        counts["kept-head attacks"] += 1
        replaced = all(head.is_file() and not head.is_symlink() for head in heads)
        if (code not in (0, 4) or peak > normal + KEPT_MEMORY_MIB or not replaced
                or target.read_text(encoding="utf-8") != "never to be read as a state\n"):
            counts["kept-head attacks failed"] += 1
            counts["examples"].append(f"kept head as a {plant}: exit {code} after {seconds:.0f} s, peak "
                                      f"{peak:.0f} MiB (a normal ask {normal:.0f}), replaced: {replaced}: {line}")
        counts["kept-head peak MiB over a normal ask"] = max(counts.get("kept-head peak MiB over a normal ask", 0),
                                                              round(peak - normal))


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
              "batches stopped": 0, "drip asks": 0, "deadlines overrun": 0, "kept-head attacks": 0,
              "kept-head attacks failed": 0, "examples": []}
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
            slow_drip(db, counts)
            planted_kept_heads(db, folder, counts)
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
