"""`longqa ingest`, `inspect` and `rm` through the real command line."""

import os
import signal
import sqlite3
import subprocess
import sys
import time

import pytest

from longqa.models.threads import nice_of
from tests.command import run, run_json

DOC = "# Handbook\n\n## Safety\n\nWear goggles in the lab at all times.\n\n## Cleaning\n\nWipe benches with ethanol.\n"


def test_ingest_skip_update_force(tmp_path, db_path):
    path = tmp_path / "handbook.md"
    path.write_text(DOC)
    result, out = run_json("ingest", path, db=db_path)
    assert result.returncode == 0
    entry = out["documents"][0]
    assert entry["status"] == "added" and entry["structure"] == "markdown" and entry["nodes"] >= 5
    assert out["failed"] == 0 and set(entry) >= {"path", "id", "status", "error", "pages", "nodes", "structure", "seconds"}

    _, again = run_json("ingest", path, db=db_path)
    assert again["documents"][0]["status"] == "skipped"

    path.write_text(DOC + "\n## Storage\n\nKeep solvents in the cabinet.\n")
    _, changed = run_json("ingest", path, db=db_path)
    assert changed["documents"][0]["status"] == "updated"
    assert changed["documents"][0]["id"] == entry["id"]

    _, forced = run_json("ingest", path, "--force", db=db_path)
    assert forced["documents"][0]["status"] == "updated"

    _, tree = run_json("inspect", "tree", "handbook.md", db=db_path)
    assert [c["title"] for c in tree["children"]] == ["Safety", "Cleaning", "Storage"]
    assert tree["kind"] == "document" and {"id", "title", "page_start", "page_end", "tokens"} <= set(tree)


def test_bad_inputs_fail_one_line_each_and_others_store(tmp_path, db_path):
    good = tmp_path / "good.md"
    good.write_text(DOC)
    binary = tmp_path / "blob.txt"
    binary.write_bytes(b"\x00\x01\x02" * 100)
    empty = tmp_path / "empty.md"
    empty.write_text("")
    result = run("ingest", good, binary, empty, tmp_path / "missing.txt", db=db_path)
    assert result.returncode == 3
    lines = [line for line in result.stderr.splitlines() if line.startswith("longqa:")]
    assert len(lines) == 3
    assert any("blob.txt" in line and "binary" in line for line in lines)
    assert any("empty.md" in line and "empty" in line for line in lines)
    assert any("missing.txt" in line and "no such file" in line for line in lines)
    assert "Traceback" not in result.stderr
    _, listing = run_json("inspect", "docs", db=db_path)
    assert [d["title"] for d in listing] == ["Handbook"]


def test_stdin_paths_directories_and_rm(tmp_path, db_path):
    folder = tmp_path / "notes"
    (folder / "sub").mkdir(parents=True)
    (folder / "a.md").write_text(DOC)
    (folder / "sub" / "b.txt").write_text("Plain notes about the garden and its many flowers.")
    (folder / "ignored.bin").write_bytes(b"\x00" * 10)
    result, out = run_json("ingest", folder, db=db_path)
    assert result.returncode == 0 and len(out["documents"]) == 2

    result, out = run_json("ingest", "-", db=db_path, stdin=f"{folder / 'a.md'}\n")
    assert out["documents"][0]["status"] == "skipped"

    result, out = run_json("rm", "b.txt", db=db_path)
    assert result.returncode == 0 and len(out["removed"]) == 1
    _, listing = run_json("inspect", "docs", db=db_path)
    assert len(listing) == 1
    missing = run("rm", "nope.md", db=db_path)
    assert missing.returncode == 1 and "nope.md" in missing.stderr and len(missing.stderr.splitlines()) == 1


def test_inspect_node_and_usage_errors(tmp_path, db_path):
    path = tmp_path / "h.md"
    path.write_text(DOC)
    run("ingest", path, db=db_path)
    _, tree = run_json("inspect", "tree", "h.md", db=db_path)
    leaf = tree["children"][0]["children"][0]
    _, node = run_json("inspect", "node", leaf["id"], db=db_path)
    assert node["text"].startswith("Wear goggles") and node["path"] == "Handbook > Safety"
    assert run("ingest", path, "--structure", "bogus", db=db_path).returncode == 2
    plain = run("inspect", "tree", "h.md", db=db_path, env={"NO_COLOR": "1"})
    assert "Safety" in plain.stdout and "\x1b[" not in plain.stdout


def test_kill_9_mid_ingest_leaves_only_whole_documents(tmp_path, db_path):
    folder = tmp_path / "many"
    folder.mkdir()
    body = "\n\n".join(f"Paragraph {i} about topic {i % 7} with some words to index." for i in range(60))
    for i in range(40):
        (folder / f"doc{i:02}.txt").write_text(f"Doc {i}\n\n{body}")
    argv = [sys.executable, "-m", "longqa", "ingest", str(folder), "-d", str(db_path), "--quiet"]
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.time() + 60
    while time.time() < deadline:  # wait until some documents are committed, then kill hard
        time.sleep(0.2)
        if db_path.exists():
            try:
                with sqlite3.connect(db_path) as conn:
                    if conn.execute("SELECT count(*) FROM documents").fetchone()[0] >= 3:
                        break
            except sqlite3.OperationalError:
                pass
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    with sqlite3.connect(db_path) as conn:
        stored = conn.execute("SELECT id, nodes FROM documents").fetchall()
        assert 0 < len(stored) < 40
        for doc_id, n in stored:  # every stored document is whole
            assert conn.execute("SELECT count(*) FROM nodes WHERE doc_id=?", (doc_id,)).fetchone()[0] == n
        orphans = conn.execute("SELECT count(*) FROM nodes WHERE doc_id NOT IN (SELECT id FROM documents)")
        assert orphans.fetchone()[0] == 0
    result, out = run_json("ingest", folder, db=db_path)
    assert result.returncode == 0
    statuses = [d["status"] for d in out["documents"]]
    assert statuses.count("skipped") == len(stored) and statuses.count("added") == 40 - len(stored)


def test_ingest_writes_the_mapped_vectors_file_so_the_first_ask_need_not(tmp_path, db_path):
    from longqa.store import open_db
    from longqa.store.vector_file import file_for, read
    from longqa.store.vectors import vector_models, vector_state

    doc = tmp_path / "pumps.md"
    doc.write_text("# Pumps\n\nThe duty pump runs for twelve hours, then the standby pump takes over.\n")
    result = run("ingest", doc, db=db_path)
    assert result.returncode == 0, result.stderr
    db = open_db(db_path)
    (model,) = vector_models(db)
    uuid, version = vector_state(db)
    mapped = read(file_for(db_path, model), store_uuid=uuid, version=version, model=model)
    assert mapped is not None and len(mapped.node_ids) == 1  # current: it mirrors the store as it is now


@pytest.mark.skipif(not os.path.exists("/proc/self/stat"), reason="reads a process's priority from /proc (Linux)")
@pytest.mark.parametrize("option, lowered_by", [((), 10), (("--nice", "4"), 4)])
def test_ingest_runs_at_a_lower_priority_so_an_ask_meanwhile_keeps_its_speed(tmp_path, db_path, option, lowered_by):
    # Paths read from stdin: the command waits on it, priority already set, until stdin closes.
    argv = [sys.executable, "-m", "longqa", "ingest", "-", "-d", str(db_path), "--quiet", *option]
    proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, text=True)
    ours = os.nice(0)
    try:
        deadline = time.time() + 60
        while nice_of(proc.pid) == ours and time.time() < deadline and proc.poll() is None:
            time.sleep(0.05)
        assert nice_of(proc.pid) == min(ours + lowered_by, 19)
    finally:
        doc = tmp_path / "notes.md"
        doc.write_text(DOC)
        proc.communicate(f"{doc}\n", timeout=120)
    assert proc.returncode == 0
    assert run("inspect", "docs", db=db_path).stdout.count("notes.md") == 1
