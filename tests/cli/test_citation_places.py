"""Citations fit the format: a PDF's quotes and sources name their pages; a web page's, a markdown
file's and a plain text's name the section path alone (a web page has no "p. 1"). Real stores built
from one generated handbook written in each format; `ask` runs with the shared fake models."""

from __future__ import annotations

import html
import re

import pytest

from tests.ask_support import build_store, reactor_handbook
from tests.pdfgen import H, P, make_pdf
from tests.cli.test_ask import longqa

QUESTION = "How fast do the emergency diesel generators start after a grid loss?"
TITLE = "Harbor Point Reactor Handbook"
SECTION = "Emergency Procedures > Emergency Procedures Details"


def handbook_parts() -> list[tuple[int, str]]:
    """The generated handbook as (heading level, text) parts; level 0 is a paragraph."""
    parts = []
    for chunk in reactor_handbook().split("\n"):
        heading = re.match(r"(#+) (.*)", chunk)
        if heading:
            parts.append((len(heading.group(1)), heading.group(2)))
        elif chunk.strip():
            parts.append((0, chunk.strip()))
    return parts


def as_html() -> str:
    body = "".join(f"<h{level}>{html.escape(text)}</h{level}>" if level else f"<p>{html.escape(text)}</p>"
                   for level, text in handbook_parts())
    return f"<!DOCTYPE html>\n<html><head><title>{TITLE}</title></head><body>{body}</body></html>\n"


def as_text() -> str:
    """Numbered headings ("3. Emergency Procedures", "3.2 Emergency Procedures Details"), text
    wrapped at 72 columns as a licence or a standard ships it."""
    lines, numbers = [TITLE, ""], [0, 0]
    for level, text in handbook_parts()[1:]:
        if level:
            numbers[level - 2] += 1
            if level == 2:
                numbers[1] = 0
            label = f"{numbers[0]}." if level == 2 else f"{numbers[0]}.{numbers[1]}"
            lines += [f"{label} {text}", ""]
        else:
            lines += [*wrapped(text), ""]
    return "\n".join(lines)


def wrapped(text: str, width: int = 72) -> list[str]:
    out, line = [], ""
    for word in text.split():
        if line and len(line) + 1 + len(word) > width:
            out.append(line)
            line = word
        else:
            line = f"{line} {word}".strip()
    return out + [line]


@pytest.fixture
def formats(tmp_path, monkeypatch):
    """A real store holding the handbook as a web page, markdown, plain text and a PDF (a title
    page, then a page per section: the emergency procedures on page 4)."""
    from tests.conftest import use_fake_models
    from tests.fakes import FakeEmbedder

    db_path = tmp_path / "store.db"
    build_store(db_path, {"handbook.html": as_html(), "handbook.md": reactor_handbook(), "handbook.txt": as_text()},
                tmp_path)
    pages, page = [], []
    for level, text in handbook_parts():
        if level == 2 and page:
            pages.append(page)
            page = []
        page.append(H(text, size={1: 20.0, 2: 16.0, 3: 13.0}[level]) if level else P(text))
    pdf = make_pdf(tmp_path / "handbook.pdf", [*pages, page], title=TITLE)
    from longqa.ingest import Ingestor
    from longqa.store import open_db

    assert Ingestor(db=open_db(db_path), embedder=FakeEmbedder()).ingest(pdf).status == "added"
    use_fake_models(monkeypatch)
    return tmp_path, db_path


def quote_and_sources(monkeypatch, capsys, db_path, doc) -> tuple[list[str], list[str]]:
    code, out, err = longqa(monkeypatch, capsys, "ask", QUESTION, "--no-stream", "--budget", "600",
                            "--doc", doc, "-d", db_path)
    assert code == 0, err
    answer, sources = out.split("\nSources:\n")
    places = [line.strip() for line in answer.splitlines() if re.match(r"\s+\[\d+\] ", line)]
    return places, [line.strip() for line in sources.splitlines() if line.strip()]


@pytest.mark.parametrize("name, title, section", [
    ("handbook.html", TITLE, SECTION),
    ("handbook.md", TITLE, SECTION),
    # the text's first line, straight over its first numbered heading, is its title
    ("handbook.txt", TITLE, "3. Emergency Procedures > 3.2 Emergency Procedures Details"),
])
def test_documents_without_pages_are_cited_by_section(formats, monkeypatch, capsys, name, title, section):
    folder, db_path = formats
    places, sources = quote_and_sources(monkeypatch, capsys, db_path, str(folder / name))
    assert places and sources
    # cited by the section path (which section holds the chosen answer is the ranker's business)
    parent = section.split(" > ")[0]
    assert any(f"{title} > {parent}" in place for place in places), places
    assert any(f"{title} — {parent}" in line for line in sources), sources
    assert not any(re.search(r"\bpp?\. \d", line) for line in places + sources), places + sources


def test_a_pdf_is_cited_by_its_pages(formats, monkeypatch, capsys):
    folder, db_path = formats
    places, sources = quote_and_sources(monkeypatch, capsys, db_path, str(folder / "handbook.pdf"))
    assert any(re.search(r"> Emergency Procedures[^,]*, pp?\. \d+(?:–\d+)?$", place) for place in places), places
    assert any(re.search(r"— Emergency Procedures.* — pp?\. \d+(?:–\d+)?$", line) for line in sources), sources


def test_json_keeps_every_document_s_page_fields(formats, monkeypatch, capsys):
    """The JSON contract is unchanged: machine readers get the stored page fields for every format."""
    import json

    folder, db_path = formats
    code, out, _ = longqa(monkeypatch, capsys, "ask", QUESTION, "--json", "--doc", str(folder / "handbook.html"),
                          "-d", db_path)
    data = json.loads(out)
    assert code == 0 and data["citations"][0]["page_start"] == 1
