"""The store against what it finds on disk: a crash's log in a folder the reader cannot write, a
store from a newer longqa, a planted or shuffled vector file, a read-only store for `rm`."""

from __future__ import annotations

import hashlib
import os
import shutil
import signal
import sqlite3
import stat
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from longqa.errors import StoreError
from longqa.ingest import Ingestor
from longqa.store import open_db
from longqa.store import vector_file
from longqa.store.vectors import forget_vectors, load_vectors
from tests.ask_support import reactor_handbook
from tests.command import run, run_json
from tests.fakes import FakeEmbedder

REPO = Path(__file__).resolve().parents[2]

CRASH = """
import os, sys
from pathlib import Path
from longqa.ingest import Ingestor
from longqa.store import open_db
from tests.fakes import FakeEmbedder

db = open_db(sys.argv[1])
ingestor = Ingestor(db=db, embedder=FakeEmbedder())
for name in sys.argv[2:]:
    assert ingestor.ingest(Path(name)).status == "added"
os.kill(os.getpid(), 9)  # no checkpoint, no clean close: the documents are only in the log
"""


def crashed_store(folder: Path) -> Path:
    """A store whose three documents are only in its write-ahead log: the writer was killed."""
    folder.mkdir()
    names = []
    for i in range(3):
        path = folder.parent / f"manual{i}.md"
        path.write_text(reactor_handbook().replace("Harbor Point", f"Unit {i}"), encoding="utf-8")
        names.append(str(path))
    store = folder / "store.db"
    crash = subprocess.run([sys.executable, "-c", CRASH, str(store), *names], cwd=REPO, capture_output=True,
                           text=True, env={**os.environ, "PYTHONPATH": str(REPO)})
    assert crash.returncode == -signal.SIGKILL, crash.stderr
    assert Path(f"{store}-wal").stat().st_size > 0
    return store


def read_only(target: Path, argv: list[str]) -> list[str]:
    """`argv` run so that `target` (a folder or a file) cannot be written: a read-only bind mount
    in a mount namespace for root (whom permissions do not stop), its mode for anyone else (the
    caller gives the mode back)."""
    if os.geteuid() != 0:
        target.chmod(0o555 if target.is_dir() else 0o444)
        return argv
    script = 'mount --bind "$1" "$1" && mount -o remount,ro,bind "$1" "$1" && shift && exec "$@"'
    probe = subprocess.run(["unshare", "-m", "sh", "-c", script, "sh", str(target), "true"], capture_output=True)
    if probe.returncode != 0:
        pytest.skip("root without mount namespaces: no way to make a file read-only here")
    return ["unshare", "-m", "sh", "-c", script, "sh", str(target), *argv]


@pytest.mark.parametrize("keep_index", [True, False])
def test_a_crashed_store_in_a_read_only_folder_reads_its_log(tmp_path, keep_index):
    store = crashed_store(tmp_path / "shared")
    if not keep_index:  # as when the store and its log were copied without the -shm index
        Path(f"{store}-shm").unlink()
    before = {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in store.parent.iterdir()}
    argv = [sys.executable, "-m", "longqa", "inspect", "docs", "--json", "-d", str(store)]
    try:
        listing = subprocess.run(read_only(store.parent, argv), capture_output=True, text=True, cwd=REPO,
                                 env={**os.environ, "PYTHONPATH": str(REPO)})
    finally:
        store.parent.chmod(0o700)
    assert listing.returncode == 0, listing.stderr
    import json

    assert [doc["title"] for doc in json.loads(listing.stdout)] == [
        "Unit 0 Reactor Handbook", "Unit 1 Reactor Handbook", "Unit 2 Reactor Handbook"]
    after = {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in store.parent.iterdir()}
    assert after == before  # nothing written beside the store


def test_a_store_from_a_newer_longqa_is_not_written(tmp_path, db_path):
    (tmp_path / "manual.md").write_text(reactor_handbook(), encoding="utf-8")
    db = open_db(db_path)
    Ingestor(db=db, embedder=FakeEmbedder()).ingest(tmp_path / "manual.md")
    db.conn.close()
    conn = sqlite3.connect(db_path)  # what a later version's migration leaves behind
    with conn:
        conn.execute("INSERT INTO _migrations (name, applied) VALUES ('m099_later', 'then')")
        conn.execute("PRAGMA user_version = 99")
    conn.close()  # the last connection: its log is merged into the file, which is all there is now
    before = hashlib.sha256(db_path.read_bytes()).hexdigest()
    with pytest.raises(StoreError, match=r"newer longqa \(store schema version 99, this longqa knows up to 5\)"):
        open_db(db_path)
    removed = run("rm", "manual.md", db=db_path)
    assert removed.returncode == 1 and removed.stderr.count("\n") == 1
    assert "newer longqa" in removed.stderr and "Traceback" not in removed.stderr
    assert hashlib.sha256(db_path.read_bytes()).hexdigest() == before
    _, listing = run_json("inspect", "docs", db=db_path)  # reading it is still allowed
    assert [doc["title"] for doc in listing] == ["Harbor Point Reactor Handbook"]


def test_rm_on_a_store_that_cannot_be_written_is_one_line(tmp_path):
    store = crashed_store(tmp_path / "shared")
    opened = open_db(store)  # merge the log as the owner would
    opened.conn.close()
    argv = [sys.executable, "-m", "longqa", "rm", "1", "-d", str(store)]
    try:  # the file read-only in a folder that can be written: opened, then refused at the write
        removed = subprocess.run(read_only(store, argv), capture_output=True, text=True, cwd=REPO,
                                 env={**os.environ, "PYTHONPATH": str(REPO)})
    finally:
        store.chmod(0o600)
    assert removed.returncode == 1
    assert removed.stderr.startswith("longqa: error: ") and "internal error" not in removed.stderr
    assert removed.stderr.count("\n") == 1, removed.stderr


# -- the vector file beside the store --------------------------------------------------------------------

def vector_store(tmp_path: Path, db_path: Path):
    (tmp_path / "manual.md").write_text(reactor_handbook(), encoding="utf-8")
    db = open_db(db_path)
    Ingestor(db=db, embedder=FakeEmbedder()).ingest(tmp_path / "manual.md")
    return db


def fresh_load(db):
    forget_vectors()  # as a new process would: no cache in memory
    return load_vectors(db, FakeEmbedder.name)


def test_the_vector_folder_is_private_and_shuffled_rows_are_rebuilt(tmp_path, db_path):
    db = vector_store(tmp_path, db_path)
    truth = fresh_load(db)
    node_ids, matrix = np.array(truth.node_ids), np.array(truth.matrix)
    folder = vector_file.folder_for(db_path)
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    path = vector_file.file_for(db_path, FakeEmbedder.name)
    # swap two whole rows (ids and vectors) under the same header, as a careless copy tool might
    raw = bytearray(path.read_bytes())
    signs = len(node_ids) * 8 * vector_file.code_words(matrix.shape[1])  # the sign bits close the file
    start = len(raw) - signs - len(node_ids) * (16 + matrix.shape[1] * 4)
    ids = np.frombuffer(bytes(raw[start:start + len(node_ids) * 8]), np.int64).copy()
    ids[[0, 1]] = ids[[1, 0]]
    raw[start:start + len(node_ids) * 8] = ids.tobytes()
    vectors_at = start + len(node_ids) * 16
    vectors_end = len(raw) - signs
    rows = np.frombuffer(bytes(raw[vectors_at:vectors_end]), np.float32).reshape(matrix.shape).copy()
    rows[[0, 1]] = rows[[1, 0]]
    raw[vectors_at:vectors_end] = rows.tobytes()
    path.write_bytes(bytes(raw))
    loaded = fresh_load(db)
    np.testing.assert_array_equal(loaded.node_ids, node_ids)
    np.testing.assert_array_equal(loaded.matrix, matrix)


def test_a_planted_pipe_or_link_is_not_opened(tmp_path, db_path):
    db = vector_store(tmp_path, db_path)
    truth = np.array(fresh_load(db).node_ids)
    path = vector_file.file_for(db_path, FakeEmbedder.name)
    path.unlink()
    os.mkfifo(path)  # opening it for reading would wait for a writer forever
    code = ("import sys; from longqa.store import open_db; from longqa.store.vectors import load_vectors; "
            "print(list(load_vectors(open_db(sys.argv[1], readonly=True), sys.argv[2]).node_ids.tolist()))")
    try:
        loaded = subprocess.run([sys.executable, "-c", code, str(db_path), FakeEmbedder.name], capture_output=True,
                                text=True, timeout=60, env={**os.environ, "PYTHONPATH": str(REPO)})
    except subprocess.TimeoutExpired:
        pytest.fail("the vectors were read through a planted pipe")
    assert loaded.returncode == 0, loaded.stderr
    assert loaded.stdout.strip() == str(truth.tolist())
    assert path.is_file()  # the pipe was replaced by a rebuilt file
    path.unlink()
    decoy = tmp_path / "elsewhere" / "decoy.lqv"  # a vector file of some other store
    assert vector_file.write(decoy, store_uuid="x", version=0, model="m", node_ids=np.zeros(0, np.int64),
                             doc_ids=np.zeros(0, np.int64), matrix=np.zeros((0, 4)))
    planted = decoy.read_bytes()
    path.symlink_to(decoy)
    np.testing.assert_array_equal(np.array(fresh_load(db).node_ids), truth)
    assert decoy.read_bytes() == planted  # neither read nor written through the link
    assert path.is_file() and not path.is_symlink()  # the link itself was replaced


@pytest.mark.skipif(os.geteuid() != 0, reason="handing a folder to another user needs root")
def test_a_vector_folder_of_another_user_is_not_trusted(tmp_path, db_path):
    db = vector_store(tmp_path, db_path)
    truth = np.array(fresh_load(db).node_ids)
    folder = vector_file.folder_for(db_path)
    shutil.rmtree(folder)
    folder.mkdir(mode=0o777)
    folder.chmod(0o777)
    os.chown(folder, 65534, 65534)  # as if another user created it first in a shared directory
    path = vector_file.file_for(db_path, FakeEmbedder.name)
    assert vector_file.write(path, store_uuid="x", version=0, model="m", node_ids=np.zeros(0, np.int64),
                             doc_ids=np.zeros(0, np.int64), matrix=np.zeros((0, 4))) is False
    np.testing.assert_array_equal(np.array(fresh_load(db).node_ids), truth)
    assert not path.exists()
