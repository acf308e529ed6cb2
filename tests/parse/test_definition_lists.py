"""Definition lists (a manual page's FILES and options, a web page's <dl>) are kept as term +
description units: a description never runs on into the next term."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pymupdf

from longqa.parse import parse_file
from longqa.text import sentences

FILES = [
    ("/etc/profile", "The systemwide initialization file, executed for login shells"),
    ("~/.bash_history", "The default value of HISTFILE, the file in which bash saves the command history"),
    ("~/.inputrc", "Individual readline initialization file"),
]
WHEN = "when the shell starts, or at its exit when the shell reads and writes the files kept for its user"
INTRO = ("The shell reads the files below when it starts and when it exits, and it writes the command "
         "history to one of them. Each file is named by its path and described on the lines under it.")


def man_files_pdf(path: Path) -> Path:
    """A manual page's FILES list as groff prints it: each path at one column, its description a
    few characters to the right on the line below, lines set close enough to form one block."""
    doc = pymupdf.open()
    page = doc.new_page(width=612, height=792)
    y = 90.0
    page.insert_text((72, y), "FILES", fontsize=10, fontname="hebo")
    for term, description in FILES:
        y += 12.5
        page.insert_text((100, y), term, fontsize=10, fontname="helv")
        y += 12.5
        page.insert_text((136, y), description, fontsize=10, fontname="helv")
    y += 25
    for line in ("The shell reads the files above when it starts and when it exits, and it writes",
                 "the command history to one of them when the shell exits or when asked to."):
        page.insert_text((72, y), line, fontsize=10, fontname="helv")
        y += 12.5
    doc.save(path)
    doc.close()
    return path


def _sentences(blocks) -> list[str]:
    return [" ".join(b.text[s:e].split()) for b in blocks for s, e in sentences.split(b.text)]


def _assert_units(blocks) -> None:
    texts = [b.text for b in blocks]
    for term, description in FILES:
        assert any(term in [line.strip() for line in t.split("\n")] and description in " ".join(t.split(term, 1)[1].split())
                   for t in texts), (term, texts)
    for sentence in _sentences(blocks):  # no description runs on into the next term
        for term, _ in FILES:
            assert not (term in sentence and not sentence.startswith(term)), sentence


def test_pdf_files_list_keeps_each_path_with_its_description(tmp_path):
    _assert_units(parse_file(man_files_pdf(tmp_path / "bash.pdf")).blocks)


def test_text_man_page_files_list_keeps_each_path_with_its_description(tmp_path):
    # As `man` prints it: filled to 78 columns, each path at column 7, its description at 14.
    def filled(text: str, indent: int) -> str:
        return textwrap.fill(text, 78, initial_indent=" " * indent, subsequent_indent=" " * indent)

    items = "\n".join(f"{filled(term, 7)}\n{filled(text + ' ' + WHEN, 14)}" for term, text in FILES)
    text = (f"DESCRIPTION\n{filled(INTRO + ' ' + INTRO, 7)}\n\nFILES\n{items}\n\n"
            f"SEE ALSO\n{filled(INTRO, 7)}\n")
    path = tmp_path / "bash.txt"
    path.write_text(text)
    _assert_units(parse_file(path).blocks)


def test_html_definition_list_term_and_description_are_one_block(tmp_path):
    items = "".join(f"<dt>{term}</dt><dd><p>{text}.</p><p>Read once per shell.</p></dd>" for term, text in FILES)
    path = tmp_path / "bash.html"
    path.write_text(f"<html><body><h2>FILES</h2><p>{INTRO}</p><dl>{items}</dl><p>{INTRO}</p>"
                    "<dl><dt>Bibliography</dt></dl><ul><li>Ramey, C. The shell's manual, 2022.</li></ul></body></html>")
    blocks = parse_file(path).blocks
    _assert_units(blocks)
    assert sum(b.text == "Read once per shell." for b in blocks) == len(FILES)
    # A term with no description of its own is not joined to the list after it.
    assert "Ramey, C. The shell's manual, 2022." in [b.text for b in blocks]


def test_verse_and_indented_paragraphs_are_no_definition_list(tmp_path):
    stanza = ("  Savior, like a shepherd, lead us,\n    Much we need Thy tender care,\n"
              "  In Thy pleasant pastures feed us,\n    For our use Thy folds prepare.\n")
    prose = textwrap.fill(INTRO + " " + INTRO, 72)
    path = tmp_path / "hymns.txt"
    path.write_text(f"{prose}\n\n{stanza}\n{prose}\n")
    texts = [b.text for b in parse_file(path).blocks]
    assert any("lead us," in t and "folds prepare." in t for t in texts), texts
