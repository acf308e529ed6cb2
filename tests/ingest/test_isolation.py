"""`longqa ingest` isolates every input: one bad name, encoding, link or disk error fails that input
alone, with one escaped line on stderr, and the exit code says whether anything was done."""

import errno
import io
import os
import resource
import signal
import sqlite3
import subprocess
import sys

import pytest

import longqa.ingest as ingest_module
import longqa.models.resolve as resolve
from longqa.cli import main
from longqa.errors import StoreError
from longqa.ingest import Ingestor
from longqa.store import open_db
from tests.fakes import FakeEmbedder
from tests.command import run, run_json

DOC = "# Handbook\n\n## Safety\n\nWear goggles in the lab at all times.\n\n## Cleaning\n\nWipe benches with ethanol.\n"


def failure_lines(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.startswith("longqa: ")]


def stored_titles(db_path) -> list[str]:
    with sqlite3.connect(db_path) as conn:
        return sorted(row[0] for row in conn.execute("SELECT title FROM documents"))


def test_odd_names_are_stored_and_printed_escaped(tmp_path, db_path):
    latin1 = os.fsdecode(b"caf\xe9 notes.txt")  # not valid UTF-8, as on an old archive
    control = "new\nline\x1b[31m red.txt"
    (tmp_path / "good.md").write_text(DOC)
    (tmp_path / latin1).write_text("Notes about the cafe and its opening hours on weekdays.")
    (tmp_path / control).write_text("A file whose name holds a newline and a terminal escape code.")
    result = run("ingest", tmp_path / "good.md", tmp_path / latin1, tmp_path / control, db=db_path)
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr
    assert stored_titles(db_path) == ["Handbook", "caf\\xe9 notes", "new line [31m red"]
    with sqlite3.connect(db_path) as conn:
        paths = sorted(row[0] for row in conn.execute("SELECT path FROM documents"))
    assert any(path.endswith("/caf\\xe9 notes.txt") for path in paths)

    _, listing = run_json("inspect", "docs", db=db_path)  # valid JSON despite the names
    assert len(listing) == 3
    again, out = run_json("ingest", tmp_path / latin1, db=db_path)  # the same name finds its record
    assert out["documents"][0]["status"] == "skipped"

    # A failing odd name: one line, the name escaped, nothing raw reaching the terminal.
    missing = run("ingest", tmp_path / ("gone\n\x1b[2J" + latin1), db=db_path)
    assert missing.returncode == 1
    lines = failure_lines(missing.stderr)
    assert len(lines) == 1 and "gone\\n\\x1b[2Jcaf\\xe9 notes.txt: no such file, and no files match it as a pattern" in lines[0]
    assert "\x1b" not in missing.stderr


def test_links_directories_and_devices_each_fail_with_their_own_reason(tmp_path, db_path):
    (tmp_path / "good.md").write_text(DOC)
    (tmp_path / "x.pdf").mkdir()  # a directory named like a document
    (tmp_path / "loop1").symlink_to(tmp_path / "loop2")
    (tmp_path / "loop2").symlink_to(tmp_path / "loop1")
    (tmp_path / "broken.md").symlink_to(tmp_path / "nowhere.md")
    os.mkfifo(tmp_path / "pipe.txt")  # reading it would wait forever
    inputs = ["good.md", "x.pdf", "loop1", "broken.md", "pipe.txt", "missing.md"]
    result = run("ingest", *(tmp_path / name for name in inputs), db=db_path)
    assert result.returncode == 3
    assert "Traceback" not in result.stderr
    lines = failure_lines(result.stderr)
    assert len(lines) == 5
    reasons = {line.split(": ", 2)[1].rsplit("/", 1)[-1]: line.split(": ", 2)[2] for line in lines}
    assert reasons == {
        "x.pdf": "directory holds no documents (no .htm, .html, .markdown, .md, .pdf, .text, .txt files)",
        "loop1": "symbolic link loop (the link leads back to itself)",
        "broken.md": "broken symbolic link (its target does not exist)",
        "pipe.txt": "not a regular file (a device, pipe or socket)",
        "missing.md": "no such file or directory",
    }
    assert stored_titles(db_path) == ["Handbook"]

    nothing = run("ingest", tmp_path / "x.pdf", tmp_path / "loop1", db=db_path)
    assert nothing.returncode == 1  # nothing was done
    assert len(failure_lines(nothing.stderr)) == 2


def test_a_folder_reports_the_documents_it_cannot_reach(tmp_path, db_path):
    folder = tmp_path / "papers"
    (folder / "nested.pdf").mkdir(parents=True)  # a directory named .pdf inside: walked into
    (folder / "nested.pdf" / "inner.md").write_text(DOC.replace("Handbook", "Inner"))
    (folder / "a.md").write_text(DOC)
    (folder / "ring.md").symlink_to(folder / "ring.md")
    (folder / "notes.bin").write_bytes(b"\x00" * 8)  # not a document type: passed over silently
    result, out = run_json("ingest", folder, db=db_path)
    assert result.returncode == 3
    statuses = {os.path.basename(d["path"]): (d["status"], d["error"]) for d in out["documents"]}
    assert statuses == {
        "ring.md": ("failed", "symbolic link loop (the link leads back to itself)"),
        "a.md": ("added", None),
        "inner.md": ("added", None),
    }


def test_stdin_paths_are_bytes(tmp_path, db_path):
    name = os.fsdecode(b"r\xe9sum\xe9.md")
    (tmp_path / name).write_text(DOC)
    argv = [sys.executable, "-m", "longqa", "ingest", "-", "-d", str(db_path), "--json"]
    stdin = os.fsencode(str(tmp_path / name)) + b"\n" + os.fsencode(str(tmp_path / "absent.md")) + b"\n"
    result = subprocess.run(argv, input=stdin, capture_output=True)
    assert result.returncode == 3
    out = result.stdout.decode("utf-8")  # strict: the JSON is valid UTF-8
    assert "r\\\\xe9sum\\\\xe9.md" in out
    assert b"absent.md: no such file or directory" in result.stderr


def ingest_in_process(monkeypatch, capsys, *args):
    """The real entry point in this process (so a failure can be injected), with the shared fake
    embedder in place of the default model."""
    monkeypatch.setattr(resolve, "load_embedder", lambda embed_model=None, llm_url=None: FakeEmbedder())
    monkeypatch.setattr(sys, "argv", ["longqa", "ingest", *map(str, args)])
    monkeypatch.setattr(sys, "stdin", io.StringIO(""))
    with pytest.raises(SystemExit) as exited:
        main()
    captured = capsys.readouterr()
    return exited.value.code, captured.out, captured.err


def test_disk_full_ends_the_batch_naming_every_file(tmp_path, db_path, monkeypatch, capsys):
    names = ["a.md", "b.md", "c.md", "d.md"]
    for name in names:
        (tmp_path / name).write_text(DOC.replace("Handbook", name))
    real_save = ingest_module.save_document

    def save_until_full(db, record, *rest):
        if record.path.endswith("b.md"):
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return real_save(db, record, *rest)

    monkeypatch.setattr(ingest_module, "save_document", save_until_full)
    code, out, err = ingest_in_process(monkeypatch, capsys, *(tmp_path / n for n in names), "-d", db_path)
    assert code == 3
    lines = failure_lines(err)
    assert len(lines) == 3 and "Traceback" not in err
    assert lines[0].endswith("b.md: cannot write to the store (No space left on device)")
    stop = tmp_path / "b.md"
    assert lines[1].endswith(f"c.md: not stored: the batch stopped at {stop} (cannot write to the store (No space left on device))")
    assert lines[2].endswith(f"d.md: not stored: the batch stopped at {stop} (cannot write to the store (No space left on device))")
    assert stored_titles(db_path) == ["a.md"]

    # Nothing stored at all: the command failed, one error line and exit 1 ("nothing done").
    code, _, err = ingest_in_process(monkeypatch, capsys, tmp_path / "b.md", tmp_path / "c.md",
                                     "-d", tmp_path / "other.db")
    assert code == 1
    assert err.splitlines() == ["longqa: error: cannot write to the store (No space left on device)"]


def test_a_disk_full_at_the_vectors_says_which_documents_are_stored_and_which_are_not(tmp_path, db_path,
                                                                                       monkeypatch, capsys):
    # Once every file after the stop repeated "the document is stored": they were not.
    names = ["a.md", "b.md", "c.md", "d.md"]
    for name in names:
        (tmp_path / name).write_text(DOC.replace("Handbook", name))
    real_embed = ingest_module.embed_pending

    def embed_until_full(db, embedder, doc_id):
        if db.execute("SELECT path FROM documents WHERE id = ?", [doc_id]).fetchone()[0].endswith("b.md"):
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return real_embed(db, embedder, doc_id)

    monkeypatch.setattr(ingest_module, "embed_pending", embed_until_full)
    code, out, err = ingest_in_process(monkeypatch, capsys, *(tmp_path / n for n in names), "-d", db_path)
    assert code == 3
    lines = failure_lines(err)
    assert len(lines) == 3 and "Traceback" not in err
    assert lines[0].endswith("b.md: the store cannot be written (No space left on device); the document is stored, "
                             "but some of its leaves have no vectors: run `longqa reindex` once the store can be written")
    for line, name in zip(lines[1:], ("c.md", "d.md")):
        assert line.endswith(f"{name}: not stored: the batch stopped at {tmp_path / 'b.md'} "
                             "(the store cannot be written (No space left on device))"), line
    assert stored_titles(db_path) == ["a.md", "b.md"]


def test_a_full_store_raises_for_the_batch_and_keeps_what_was_stored(tmp_path, db_path):
    """A real SQLITE_FULL: the store may not grow past its current pages plus a few."""
    db = open_db(db_path)
    small, big = tmp_path / "small.md", tmp_path / "big.md"
    small.write_text(DOC)
    big.write_text("# Big\n\n" + "\n\n".join(f"Paragraph {i} of a long report. " * 20 for i in range(400)))
    ingestor = Ingestor(db=db, embedder=FakeEmbedder())
    assert ingestor.ingest(small).status == "added"
    pages = db.execute("PRAGMA page_count").fetchone()[0]
    db.execute(f"PRAGMA max_page_count = {pages + 4}")
    with pytest.raises(StoreError, match="database or disk is full"):
        ingestor.ingest(big)
    assert [row[0] for row in db.execute("SELECT title FROM documents")] == ["Handbook"]
    assert db.execute("SELECT count(*) FROM nodes").fetchone()[0] == db.execute(
        "SELECT nodes FROM documents").fetchone()[0]


def test_a_write_error_on_the_store_file_is_one_line_per_file(tmp_path, db_path):
    """No file may grow past 64 kB more than the store has (RLIMIT_FSIZE): the kernel refuses."""
    small = tmp_path / "small.md"
    small.write_text(DOC)
    big = [tmp_path / f"big{i}.md" for i in range(2)]
    for path in big:
        path.write_text("# Big\n\n" + "\n\n".join(f"Paragraph {i} of {path.name}. " * 30 for i in range(60)))
    run("ingest", small, "--structure", "layout", db=db_path)  # the store exists, with one document
    limit = db_path.stat().st_size + 64_000

    def limit_file_size():
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    argv = [sys.executable, "-m", "longqa", "ingest", str(small), *map(str, big), "-d", str(db_path),
            "--structure", "layout"]
    result = subprocess.run(argv, capture_output=True, text=True, preexec_fn=limit_file_size)
    assert result.returncode == 3, result.stderr
    lines = failure_lines(result.stderr)
    assert len(lines) == 2 and "Traceback" not in result.stderr
    assert "big0.md: the store cannot be written (" in lines[0]
    assert f"big1.md: not stored: the batch stopped at {big[0]} (the store cannot be written (" in lines[1]
    assert "the document is stored" not in lines[1]
    # Text and tree are stored before vectors: big0 may be in the store without (all) its vectors,
    # never half a document; the next ingest, with room to write, finishes the job.
    assert stored_titles(db_path) in (["Handbook"], ["Big", "Handbook"])
    again = run("ingest", small, *big, "--structure", "layout", db=db_path)
    assert again.returncode == 0, again.stderr
    assert stored_titles(db_path) == ["Big", "Big", "Handbook"]
    with sqlite3.connect(db_path) as conn:
        missing = conn.execute("SELECT count(*) FROM nodes WHERE kind = 'paragraph' AND id NOT IN "
                               "(SELECT node_id FROM embeddings)").fetchone()[0]
    assert missing == 0


def test_a_bug_triggered_by_one_file_fails_that_file_only(tmp_path, db_path, monkeypatch, capsys):
    for name in ("a.md", "b.md", "c.md"):
        (tmp_path / name).write_text(DOC.replace("Handbook", name))
    real_parse = ingest_module.parse_file

    def parse_with_bug(path, *rest):
        if path.name == "b.md":
            raise RecursionError("maximum recursion depth exceeded")
        return real_parse(path, *rest)

    monkeypatch.setattr(ingest_module, "parse_file", parse_with_bug)
    code, _, err = ingest_in_process(monkeypatch, capsys, tmp_path, "-d", db_path)
    assert code == 3
    lines = failure_lines(err)
    assert len(lines) == 1
    assert "b.md: internal error while reading it (RecursionError: maximum recursion depth exceeded;" in lines[0]
    assert stored_titles(db_path) == ["a.md", "c.md"]
