"""Bounded work per document: size, page, line-length and heading limits fail a document with a
clear line (and a flag lifts each); a document too long for the model is stored flat with a
warning; a PDF that MuPDF had to repair fails unless --allow-damaged; the inputs that once took
minutes (thousands of headings, one huge line, one line per page) parse to the right result."""

import sys
from pathlib import Path

import pymupdf
import pytest

from longqa import tokens
from longqa.config import Limits
from longqa.errors import InputError
from longqa.parse import parse_file
from longqa.parse.markdown import markdown_blocks
from longqa.structure.tree_source import structure_document
from longqa.structure.tree import sections
from tests.command import run, run_json
from tests.pdfgen import H, P, make_pdf, sentence


def many_headings(count: int) -> str:
    return "# Register\n\n" + "\n".join(f"## Entry {i}\n\nThe entry {i} notes a small fact.\n" for i in range(count))


def test_heading_limit_and_its_flag(tmp_path, db_path):
    path = tmp_path / "register.md"
    path.write_text(many_headings(300))
    refused = run("ingest", path, "--max-headings", "200", "--structure", "layout", db=db_path)
    assert refused.returncode == 1
    assert refused.stderr.splitlines()[0] == (
        f"longqa: {path}: 301 headings, over the 200 limit (--max-headings lifts it)"
    )
    result, out = run_json("ingest", path, "--structure", "layout", db=db_path)
    assert result.returncode == 0 and out["documents"][0]["structure"] == "markdown"


def test_thousands_of_headings_build_every_section(tmp_path):
    """20,000 headings once took 10 minutes (a quadratic step over headings); at test scale the
    tree must still hold one section per heading under the title."""
    path = tmp_path / "register.md"
    path.write_text(many_headings(3_000))
    root, source = structure_document(parse_file(path), "auto")
    assert source == "markdown" and root.title == "Register"
    assert [node.title for node in root.children[:2]] == ["Entry 0", "Entry 1"] and len(sections(root)) == 3_000


def test_line_limit_and_its_flag(tmp_path, db_path):
    path = tmp_path / "oneline.md"
    line = " ".join(f"word{i % 97}" for i in range(160_000))  # no newline at all: ~1.1 million characters
    path.write_text(line)
    refused = run("ingest", path, "--structure", "layout", db=db_path)
    assert refused.returncode == 1
    assert f"a line of {len(line):,} characters," in refused.stderr and "over the 1,000,000 limit: not running text? (--max-line-chars lifts it)" in refused.stderr
    lifted = run("ingest", path, "--max-line-chars", "2000000", "--max-mb", "0.1", db=db_path)
    assert "--max-line-chars" not in lifted.stderr and "over the 0.1 MB limit" in lifted.stderr  # past the line check
    root, source = structure_document(parse_file(path, Limits(max_line_chars=0)), "layout")
    assert source == "flat" and len(root.children) > 600  # split into leaves of at most 300 tokens
    assert max(leaf.tokens for leaf in root.children) <= 300
    assert "".join(leaf.text for leaf in root.children) == line


def test_a_long_line_of_hashes_is_read_in_one_pass():
    """`# a # # # … b` made the heading pattern backtrack quadratically (hours for 5 MB)."""
    line = "# a" + " #" * 300_000 + " b ##"
    (block,) = markdown_blocks(line)
    assert block.heading == 1 and block.text.startswith("a # #") and block.text.endswith("# b")


def test_size_and_page_limits(tmp_path, db_path):
    text = tmp_path / "notes.txt"
    text.write_text("Some notes about a garden. " * 100)
    refused = run("ingest", text, "--max-mb", "0.001", db=db_path)
    assert refused.returncode == 1 and "2,700" not in refused.stderr
    assert f"longqa: {text}: 0.0 MB, over the 0.001 MB limit per document (--max-mb lifts it)" in refused.stderr
    pdf = make_pdf(tmp_path / "long.pdf", [[P(sentence(f"topic{i}", 2))] for i in range(12)])
    refused = run("ingest", pdf, "--max-pages", "10", "--structure", "layout", db=db_path)
    assert refused.returncode == 1
    assert f"longqa: {pdf}: 12 pages, over the 10-page limit (--max-pages lifts it)" in refused.stderr
    assert run("ingest", pdf, "--structure", "layout", db=db_path).returncode == 0


def test_a_long_document_without_headings_is_not_sent_to_the_model(tmp_path):
    path = tmp_path / "plain.txt"
    path.write_text("\n\n".join(sentence(f"subject{i}", 4).lower() for i in range(200)))
    doc = parse_file(path)
    size = sum(tokens.count(block.text) for block in doc.blocks)

    def model_structurer(parsed):
        raise AssertionError("the model must not be asked to divide a document over the limit")

    notes: list[str] = []
    root, source = structure_document(doc, "auto", model_structurer, limits=Limits(llm_max_tokens=size - 1), notes=notes)
    assert source == "flat" and root.children
    assert notes == [
        f"no headings, and at {size:,} tokens too long to be divided by the local model "
        f"(limit {size - 1:,}; --llm-max-tokens lifts it): stored without sections"
    ]


def flip_a_content_byte(path: Path) -> Path:
    """Compress the page streams, then flip one byte in the middle of page 1's content stream."""
    with pymupdf.open(path) as doc:
        doc.save(path.with_suffix(".tmp"), deflate=True)
    data = bytearray(path.with_suffix(".tmp").read_bytes())
    with pymupdf.open(path.with_suffix(".tmp")) as doc:
        raw = doc.xref_stream_raw(doc[0].get_contents()[0])
    at = data.find(raw)
    assert at > 0
    data[at + len(raw) // 2] ^= 0xFF
    path.write_bytes(bytes(data))
    return path


def test_a_pdf_mupdf_had_to_repair_fails_unless_allowed(tmp_path, db_path):
    pages = [[H("1 Results"), P(sentence("revenue", 6))], [H("2 Costs"), P(sentence("cost", 6))]]
    pdf = flip_a_content_byte(make_pdf(tmp_path / "release.pdf", pages))
    refused = run("ingest", pdf, "--structure", "layout", db=db_path)
    assert refused.returncode == 1
    (line,) = [l for l in refused.stderr.splitlines() if l.startswith("longqa:")]
    assert line.startswith(f"longqa: {pdf}: damaged PDF (MuPDF: ") and "zlib" in line
    assert line.endswith("its text may be wrong or missing (--allow-damaged stores what can be read)")
    result, out = run_json("ingest", pdf, "--structure", "layout", "--allow-damaged", db=db_path)
    assert result.returncode == 0
    entry = out["documents"][0]
    assert entry["status"] == "added" and entry["warnings"][0].startswith("damaged PDF, stored as read (MuPDF: ")
    assert f"longqa: {pdf}: warning: damaged PDF, stored as read" in result.stderr

    healthy = make_pdf(tmp_path / "healthy.pdf", pages)
    assert parse_file(healthy).warnings == []


def test_one_line_per_page_is_text_not_a_running_header(tmp_path):
    """A ledger of one line per page (each alike but for its number) was taken for a running
    header on every page and reported as "all pages are blank"."""
    pdf = make_pdf(tmp_path / "ledger.pdf", [[P(f"Entry {n}: the ledger line recorded for this page.")] for n in range(1, 41)])
    doc = parse_file(pdf)
    texts = [block.text for block in doc.blocks]
    assert texts[0] == "Entry 1: the ledger line recorded for this page." and len(texts) == 40
