"""A document is titled by what it says it is: a manual page by its NAME line, never by generic
section names ("NAME SYNOPSIS COPYRIGHT"), in every format it is saved in."""

from __future__ import annotations

from pathlib import Path

from longqa.ingest import Ingestor
from longqa.parse import parse_file
from longqa.store import open_db
from longqa.store.documents import get_document
from tests.pdfgen import H, P, make_pdf

MAN_BODY = ("Tar saves many files together into a single tape or disk archive, and can restore individual "
            "files from the archive. It reads the options below and acts on the files named after them.")


def man_page_pdf(path: Path, title: str | None = None) -> Path:
    page = [
        H("NAME", 12), P("tar - an archiving utility", indent=0),
        H("SYNOPSIS", 12), P("tar [OPTION...] [FILE]..."),
        H("COPYRIGHT", 12), P("Copyright 2023 the authors of the archiving utility, who license it freely."),
        H("DESCRIPTION", 12), P(MAN_BODY), P(MAN_BODY),
    ]
    return make_pdf(path, [page], title=title)


def test_man_page_pdf_is_titled_by_its_name_line(tmp_path, db_path):
    path = man_page_pdf(tmp_path / "tar.pdf")
    assert parse_file(path).title == "tar - an archiving utility"
    result = Ingestor(db=open_db(db_path)).ingest(path)
    assert result.status == "added", result.error
    assert get_document(open_db(db_path), result.id)["title"] == "tar - an archiving utility"
    # A meaningful metadata title still wins; one that only refers to the page does not.
    assert parse_file(man_page_pdf(tmp_path / "titled.pdf", title="GNU tar manual page")).title == "GNU tar manual page"
    assert parse_file(man_page_pdf(tmp_path / "referred.pdf", title="tar(1)")).title == "tar - an archiving utility"


def test_man_page_printed_in_one_font_is_titled_by_its_name_line(tmp_path):
    # Printed as plain text: the heading and its line share the body's font and run together.
    page = [P("NAME\n      tar - an archiving utility"), P("SYNOPSIS\n      tar [OPTION...] [FILE]..."), P(MAN_BODY)]
    path = make_pdf(tmp_path / "tar.pdf", [page])
    assert parse_file(path).title == "tar - an archiving utility"


def test_pdf_title_skips_generic_section_names(tmp_path):
    page = [H("Alpine Bird Survey", 16), H("Introduction", 16),
            P("The survey counted the birds of three valleys over two summers. " * 4)]
    path = make_pdf(tmp_path / "survey.pdf", [page])
    assert parse_file(path).title == "Alpine Bird Survey"


def test_man_page_saved_as_text_is_titled_by_its_name_line(tmp_path):
    text = ("TAR(1)                     GNU TAR Manual                     TAR(1)\n\n"
            "NAME\n       tar - an archiving utility\n\n"
            "SYNOPSIS\n       tar [OPTION...] [FILE]...\n\n"
            f"DESCRIPTION\n       {MAN_BODY}\n")
    path = tmp_path / "tar.1.txt"
    path.write_text(text)
    assert parse_file(path).title == "tar - an archiving utility"


def test_markdown_man_page_is_not_titled_name(tmp_path):
    path = tmp_path / "tar.md"
    path.write_text(f"# NAME\n\ntar - an archiving utility\n\n# SYNOPSIS\n\ntar [OPTION...]\n\n# DESCRIPTION\n\n{MAN_BODY}\n")
    assert parse_file(path).title == "tar - an archiving utility"
    path.write_text(f"# Description\n\n{MAN_BODY}\n\n# Field Notes\n\n{MAN_BODY}\n")
    assert parse_file(path).title == "Field Notes"


def test_html_man_page_titled_by_reference_takes_its_name_line(tmp_path):
    path = tmp_path / "git-log.html"
    path.write_text("<html><head><title>git-log(1)</title></head><body>"
                    "<h2>NAME</h2><p>git-log - Show commit logs</p>"
                    "<h2>SYNOPSIS</h2><p>git log [options] [revision-range]</p>"
                    f"<h2>DESCRIPTION</h2><p>{MAN_BODY}</p></body></html>")
    assert parse_file(path).title == "git-log - Show commit logs"
