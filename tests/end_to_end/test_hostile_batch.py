"""One `longqa ingest` batch of good documents mixed with more than 60 damaged or odd ones:
truncated and byte-flipped PDFs, odd file names, encodings, links, devices, a one-line file and
a many-heading file at test scale. The batch must exit 3, name each failure once on one line, never
print a traceback, store every good document and change nothing but the store. Also: asks while
documents are being ingested."""

from __future__ import annotations

import codecs
import hashlib
import os
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pymupdf

from tests.command import run, run_json
from tests.pdfgen import H, P, image_only_pdf, make_pdf, sentence, zero_page_pdf

TOPICS = ["orchard", "harbour", "glacier", "vineyard", "lighthouse", "quarry", "meadow", "canal"]
FLAGS = ["--max-headings", "300", "--max-line-chars", "20000"]


def good_markdown(topic: str) -> str:
    return f"# The {topic} notes\n\n## Origins\n\n{sentence(topic, 3)}\n\n## Today\n\n{sentence(topic + ' visitors', 3)}\n"


def good_pdf(path: Path, topic: str, pages: int = 3) -> Path:
    return make_pdf(path, [[H(f"{n} The {topic} part {n}"), P(sentence(f"{topic} {n}", 4))] for n in range(1, pages + 1)],
                    title=f"The {topic} report")


def compressed(path: Path) -> bytes:
    """The PDF re-saved with compressed streams; returns its bytes."""
    with pymupdf.open(path) as doc:
        data = doc.tobytes(deflate=True)
    return data


def flip_in_stream(data: bytes, page: int) -> bytes:
    """Flip one byte in the middle of page `page`'s compressed content stream."""
    with pymupdf.open(stream=data, filetype="pdf") as doc:
        raw = doc.xref_stream_raw(doc[page].get_contents()[0])
    at = data.find(raw)
    assert at > 0
    out = bytearray(data)
    out[at + len(raw) // 2] ^= 0x5A
    return bytes(out)


def build_batch(root: Path) -> tuple[list[Path], dict[str, str], set[str]]:
    """The inputs, the expected failure reason (a fragment) per input name, and the titles of the
    documents that must be stored."""
    docs = root / "docs"
    docs.mkdir()
    inputs: list[Path] = []
    fails: dict[str, str] = {}
    stored: set[str] = set()

    def add(path: Path, reason: str | None = None, title: str | None = None) -> None:
        inputs.append(path)
        if reason is not None:
            fails[path.name] = reason
        else:
            stored.add(title or path.stem)

    # Good documents, in every format.
    for topic in TOPICS:
        md = docs / f"{topic}.md"
        md.write_text(good_markdown(topic))
        add(md, title=f"The {topic} notes")
        add(good_pdf(docs / f"{topic}.pdf", topic), title=f"The {topic} report")

    source = good_pdf(root / "source.pdf", "archive", pages=4)
    whole = compressed(source)
    # Truncations: a PDF cut anywhere before its end-of-file marker.
    for i, fraction in enumerate([0.02, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.97]):
        path = docs / f"truncated-{i:02}.pdf"
        path.write_bytes(whole[: int(len(whole) * fraction)])
        add(path, "damaged PDF" if fraction > 0.05 else "")
    fails["truncated-00.pdf"] = "PDF"  # 2 %: hardly more than the header
    # Byte flips inside compressed page streams, in 12 files.
    for i in range(12):
        path = docs / f"flipped-{i:02}.pdf"
        path.write_bytes(flip_in_stream(compressed(good_pdf(root / f"flip-src-{i}.pdf", f"ledger{i}")), i % 3))
        add(path, "damaged PDF (MuPDF: ")

    # Odd but valid names: stored, and listed under their names.
    odd_names = [
        "new\nline.md", "escape\x1b[31mred.md", "tab\there.md", "-starts-with-dash.md", "  spaces  .md",
        "emoji \U0001f600 notes.md", "right\u202eleft.md", os.fsdecode(b"latin1 caf\xe9.md"), "x" * 200 + ".md",
        "semi;colon & amp's.md",
    ]
    for i, name in enumerate(odd_names):
        path = docs / name
        path.write_text(good_markdown(f"oddname{i}"))
        add(path, title=f"The oddname{i} notes")

    # Encodings: every decodable one stored; undecodable bytes become U+FFFD, not a failure.
    text = "Notes on the encoding of the river survey.\n\nThe survey counted 41 herons and 7 otters."
    encodings = {
        "utf8-bom.txt": codecs.BOM_UTF8 + text.encode(),
        "utf16-le.txt": codecs.BOM_UTF16_LE + text.encode("utf-16-le"),
        "utf16-be.txt": codecs.BOM_UTF16_BE + text.encode("utf-16-be"),
        "utf32.txt": text.encode("utf-32"),
        "cp1252.txt": (text + " Caf\u00e9 \u201cquoted\u201d \u20ac5.").encode("cp1252"),
        "broken-utf8.txt": text.encode() + b" \xc3\x28 \xa0\xa1 \xf0\x28\x8c\xbc",
        "cut-multibyte.txt": (text + " \u00e9t\u00e9").encode()[:-1],
        "crlf.txt": text.replace("\n", "\r\n").encode(),
        "control-codes.txt": text.encode() + b"\x1b[2J\x07 end",
    }
    for name, data in encodings.items():
        path = docs / name
        path.write_bytes(data)
        add(path)
    (docs / "utf16-no-bom.txt").write_bytes(text.encode("utf-16-le"))
    add(docs / "utf16-no-bom.txt")  # read by its content: every other byte NUL, on one side

    # Not documents at all, or nothing in them.
    failures = {
        "binary.txt": (b"\x00\x01\x02\xff" * 300, "not a text document (binary data)"),
        "empty.md": (b"", "no text found (empty document)"),
        "blank.txt": (b" \n\n\t \n", "no text found (empty document)"),
        "plain-text.pdf": (b"Just some words, no PDF here.\n", "not a valid PDF (no PDF header"),
        "empty.pdf": (b"", "not a valid PDF (the file is empty)"),
        "html.pdf": (b"<html><body>hello</body></html>", "not a valid PDF (no PDF header"),
        "notes.docx": (b"PK\x03\x04\x14\x00\x06\x00\x08\x00\x00\x00!\x00" * 20, "not a text document: a ZIP archive"),
    }
    for name, (data, reason) in failures.items():
        path = docs / name
        path.write_bytes(data)
        add(path, reason)
    (docs / "README").write_bytes(b"No suffix at all: read by its content.")
    add(docs / "README")
    add(zero_page_pdf(docs / "no-pages.pdf"), "PDF has no pages")
    add(image_only_pdf(docs / "scan.pdf"), "no text layer")
    locked = make_pdf(docs / "locked.pdf", [[P(sentence("secret", 2))]], user_password="pw")
    add(locked, "encrypted PDF (password required)")
    (docs / "folder.pdf").mkdir()
    add(docs / "folder.pdf", "directory holds no documents")
    (docs / "loop-a.md").symlink_to(docs / "loop-b.md")
    (docs / "loop-b.md").symlink_to(docs / "loop-a.md")
    add(docs / "loop-a.md", "symbolic link loop")
    (docs / "dangling.md").symlink_to(docs / "gone.md")
    add(docs / "dangling.md", "broken symbolic link")
    os.mkfifo(docs / "pipe.md")
    add(docs / "pipe.md", "not a regular file")
    add(docs / "never-written.md", "no such file or directory")

    # Test-scale versions of the documents that took minutes.
    line = docs / "one-line.md"
    line.write_text(" ".join(f"token{i % 50}" for i in range(5_000)))
    add(line, "over the 20,000 limit: not running text?")
    many = docs / "many-headings.md"
    many.write_text("# Register\n\n" + "\n".join(f"## Entry {i}\n\nFact {i}.\n" for i in range(400)))
    add(many, "401 headings, over the 300 limit")
    fewer = docs / "some-headings.md"
    fewer.write_text("# Index\n\n" + "\n".join(f"## Entry {i}\n\nFact {i}.\n" for i in range(250)))
    add(fewer, title="some-headings")  # "Index" names a kind of section, not this document: its file name
    ledger = make_pdf(docs / "ledger.pdf", [[P(f"Entry {n}: the ledger line of this page.")] for n in range(1, 31)])
    add(ledger, title="ledger")
    return inputs, fails, stored


def snapshot(folder: Path) -> dict[str, str]:
    out = {}
    for path in sorted(folder.rglob("*")):
        if path.is_symlink() or not path.is_file():
            out[str(path)] = "link" if path.is_symlink() else "dir/other"
        else:
            out[str(path)] = hashlib.sha256(path.read_bytes()).hexdigest()
    return out


def test_a_hostile_batch(tmp_path):
    inputs, fails, stored = build_batch(tmp_path)
    odd = len(inputs) - 2 * len(TOPICS)
    assert odd >= 60 and len(fails) >= 40
    store_dir = tmp_path / "store"
    db_path = store_dir / "longqa.db"
    before = snapshot(tmp_path / "docs")

    result = run("ingest", *inputs, *FLAGS, db=db_path)
    assert result.returncode == 3
    assert "Traceback" not in result.stderr and "internal error" not in result.stderr
    lines = [line for line in result.stderr.splitlines() if line.startswith("longqa: ") and ": warning: " not in line]
    assert len(lines) == len(fails), "\n".join(lines)
    for name, reason in fails.items():
        named = [line for line in lines if line.startswith(f"longqa: {tmp_path / 'docs' / name}: ")]
        assert len(named) == 1, (name, lines)
        assert reason in named[0], (name, named[0])
    assert "\x1b" not in result.stderr and "\u202e" not in result.stderr

    with sqlite3.connect(db_path) as conn:
        titles = {row[0] for row in conn.execute("SELECT title FROM documents")}
        whole = conn.execute(
            "SELECT count(*) FROM documents d WHERE nodes != (SELECT count(*) FROM nodes n WHERE n.doc_id = d.id)"
        ).fetchone()[0]
    conn.close()
    assert titles == stored and whole == 0
    assert snapshot(tmp_path / "docs") == before  # the inputs are as they were
    # the store, its journal and the mapped vectors folder ingest writes at its end; nothing else
    assert {p.name for p in store_dir.iterdir()} <= {"longqa.db", "longqa.db-wal", "longqa.db-shm", "longqa.db.vectors"}

    # Again: the stored documents are skipped, the same failures named, the same exit code.
    again, out = run_json("ingest", *inputs, *FLAGS, db=db_path)
    assert again.returncode == 3
    statuses = [d["status"] for d in out["documents"]]
    assert statuses.count("skipped") == len(stored) and statuses.count("failed") == len(fails)


def test_asks_while_a_batch_is_being_ingested(tmp_path):
    folder = tmp_path / "docs"
    folder.mkdir()
    for i in range(30):
        (folder / f"doc{i:02}.md").write_text(good_markdown(f"{TOPICS[i % len(TOPICS)]} {i}"))
    db_path = tmp_path / "store.db"
    run("ingest", folder / "doc00.md", db=db_path)
    writer = subprocess.Popen([sys.executable, "-m", "longqa", "ingest", str(folder), "-d", str(db_path), "--quiet"],
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    codes = []
    while writer.poll() is None or len(codes) < 3:
        asked = run("ask", "orchard visitors", "--retrieval", "bm25", "--context-only", "--no-analysis", db=db_path)
        assert "locked" not in asked.stderr and "Traceback" not in asked.stderr, asked.stderr
        codes.append(asked.returncode)
        time.sleep(0.2)
    assert writer.wait() == 0, writer.stderr.read()
    assert set(codes) == {0}
    _, listing = run_json("inspect", "docs", db=db_path)
    assert len(listing) == 30
