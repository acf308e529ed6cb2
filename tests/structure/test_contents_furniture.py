"""Contents lines, index pages and running heads that change with the chapter stay out of the
leaves (and so out of retrieval and contexts)."""

from __future__ import annotations

from pathlib import Path

import pymupdf
import pytest

from longqa.parse import parse_file
from longqa.structure.tree import leaves, sections
from longqa.structure.tree_source import structure_document
from tests.pdfgen import HEIGHT, LEFT, WIDTH, H, P, draw_page, make_pdf, sentence

CHAPTERS = [("2.4. Scope", "scope"), ("2.5. Priorities", "priority"), ("2.6. Targets", "target")]


def manual(path: Path) -> Path:
    """A manual: a contents page with dot leaders, three sections of three pages each under heads
    that name the section and the page ("2.5. Priorities | 11"), and an index page."""
    doc = pymupdf.open()
    contents = [H("Contents", 14)] + [P(f"{title} . . . . . . . . . . {9 + 3 * i}") for i, (title, _) in
                                      enumerate(CHAPTERS)] + [P("Index . . . . . . . . . . . . . . 18")]
    pages: list[tuple[str | None, list]] = [(None, contents)]
    for title, topic in CHAPTERS:
        pages.append((None, [H(title, 14), P(sentence(topic, 4))]))
        pages += [(title, [P(sentence(f"{topic} detail {n}", 4))]) for n in (1, 2)]
    terms = [P(f"{word} valve, {n}, {n + 7}") for n, word in enumerate(
        ["relief", "check", "gate", "globe", "needle", "pinch", "plug", "ball", "butterfly", "diaphragm",
         "float", "foot", "piston", "poppet"], start=2)]
    pages.append((None, [H("Index", 14), *terms]))
    for number, (head, items) in enumerate(pages, start=8):
        page = doc.new_page(width=WIDTH, height=HEIGHT)
        if head:
            page.insert_text((LEFT, 36), f"{head} | {number}", fontsize=8, fontname="helv")
        draw_page(page, items)
    doc.save(path)
    doc.close()
    return path


def test_running_heads_contents_and_index_stay_out_of_leaves(tmp_path):
    doc = parse_file(manual(tmp_path / "manual.pdf"))
    root, _ = structure_document(doc)
    text = "\n".join(leaf.text for leaf in leaves(root))
    assert " | 1" not in text  # no running head with its page number
    assert ". . . ." not in text  # no contents line
    assert "relief valve, 2" not in text  # no index entry
    assert "priority detail 2" in text  # the body is all there
    assert [node.title for node in sections(root) if node.title[0].isdigit()] == [t for t, _ in CHAPTERS]


def test_numbered_headings_atop_pages_in_a_row_are_not_running_heads(tmp_path):
    """"Proposal 2" to "Proposal 4" atop three pages in a row carry numbers that run with the pages,
    but no other head shares that numbering: they are headings, kept."""
    doc = pymupdf.open()
    starts = {2: 1, 10: 2, 11: 3, 12: 4}
    for n in range(1, 16):
        page = doc.new_page(width=WIDTH, height=HEIGHT)
        items = [H(f"Proposal {starts[n]}", 12)] if n in starts else []
        draw_page(page, items + [P(sentence(f"page {n}", 3))])
        page.insert_text((LEFT, 760), str(n), fontsize=8, fontname="helv")
    doc.save(tmp_path / "notice.pdf")
    parsed = parse_file(tmp_path / "notice.pdf")
    assert [b.text for b in parsed.blocks if b.text.startswith("Proposal")] == [f"Proposal {n}" for n in range(1, 5)]


def test_contents_lines_in_a_text_file(tmp_path):
    rows = ["Introduction ........ 1", "Installation ........ 4", "Operation ........... 9", "Maintenance ........ 15"]
    body = [sentence("introduction", 2), sentence("installation", 2), sentence("operation", 2)]
    ledger = ["Net gain .......... 41", "Total ............. 12", "Losses ............ 30", "Other ............. 2"]
    path = tmp_path / "pump.txt"
    path.write_text("Contents\n\n" + "\n".join(rows) + "\n\n" + "\n\n".join(body) + "\n\n" + "\n".join(ledger) + "\n")
    root, _ = structure_document(parse_file(path))
    text = "\n".join(leaf.text for leaf in leaves(root))
    assert "Installation ...." not in text and sentence("installation", 2) in text
    assert "Net gain .......... 41" in text  # rows whose numbers go up and down are a table, not contents


def test_heads_with_the_page_number_on_either_side_and_a_chapter_name_in_the_band(tmp_path):
    """A book's heads: the page number outside, so left on even pages ("12 | 2.5. Priorities") and
    right on odd ones ("2.5. Priorities | 13"), changing with the section; a footer naming the
    chapter ("CHAPTER TWO") over every page of it. Both are removed; the chapter's first page keeps
    its footer's one appearance as no text of its own."""
    doc = pymupdf.open()
    number = 10
    for chapter, names in (("CHAPTER TWO", CHAPTERS[:2]), ("CHAPTER THREE", CHAPTERS[2:])):
        for title, topic in names:
            for n in range(3):
                page = doc.new_page(width=WIDTH, height=HEIGHT)
                draw_page(page, ([H(title, 14)] if n == 0 else []) + [P(sentence(f"{topic} part {n}", 4))])
                if n:
                    head = f"{number} | {title}" if number % 2 == 0 else f"{title} | {number}"
                    page.insert_text((LEFT, 36), head, fontsize=8, fontname="helv")
                page.insert_text((LEFT, HEIGHT - 30), chapter, fontsize=8, fontname="helv")
                number += 1
    doc.save(tmp_path / "book.pdf")
    root, _ = structure_document(parse_file(tmp_path / "book.pdf"))
    text = "\n".join(leaf.text for leaf in leaves(root))
    assert not any(f"| {n}" in text or f"{n} |" in text for n in range(10, 30)), text
    assert text.count("CHAPTER") <= 2  # at most where each chapter starts
    assert all(sentence(f"{topic} part {n}", 4) in text for _, topic in CHAPTERS for n in range(3))


def test_an_index_under_its_title_with_entries_broken_over_lines(tmp_path):
    """A reference manual's index: letters and groups between the entries, long entries broken
    over two lines, so fewer than most of its lines are whole entries; under its title at the back
    it is all kept out."""
    body = [[H(f"{n} Commands", 14), P(sentence(f"commands {n}", 6))] for n in range(1, 5)]
    index: list = [H("Index", 14), P("The numbers give the pages where each command is used.")]
    for letter, group in (("C", "cs"), ("M", "msg"), ("P", "prop"), ("S", "seq")):
        index += [P(letter), P(f"{group} commands:")]
        for n, name in enumerate(("new:Npn", "set_eq:NN", "gput:nn", "if_exist:NTF", "show:n", "use:N")):
            if n % 3 == 1:
                index += [P(f"\\{group}_{name} . . . . . . . . . 4{n}, 7{n}, 9{n},"), P(f"11{n}, 14{n}, 17{n}")]
            else:
                index.append(P(f"\\{group}_{name} . . . . . . . . . . . . {n + 2}, {n + 3}"))
    make_pdf(tmp_path / "reference.pdf", [*body, index[:24], index[24:]])  # the index on two pages
    root, _ = structure_document(parse_file(tmp_path / "reference.pdf"))
    text = "\n".join(leaf.text for leaf in leaves(root))
    assert "commands:" not in text and "_new:Npn" not in text and "110, 140" not in text, text
    assert all(sentence(f"commands {n}", 6) in text for n in range(1, 5))


def test_a_web_page_s_list_of_links_to_its_sections(tmp_path):
    """A manual page opens with "Table of Contents" and links to its sections; the list names the
    page's own headings, so it stays out of the leaves; a list of other things stays."""
    parts = [("2.1. Pump installation", "installation"), ("2.1.1. Foundations", "foundation"),
             ("2.1.2. Alignment", "alignment"), ("2.2. Pump operation", "operation"), ("2.2.1. Start-up", "start")]
    links = "".join(f'<li><a href="#s{n}">{title}</a></li>' for n, (title, _) in enumerate(parts))
    tools = "".join(f"<li>{tool}</li>" for tool in ("Dial gauge", "Feeler gauge", "Torque wrench", "Spirit level"))
    body = "".join(f'<h3 id="s{n}">{title}</h3><p>{sentence(topic, 2)}</p>' for n, (title, topic) in enumerate(parts))
    page = (f"<html><head><title>Pumps</title></head><body><h1>Chapter 2. Pumps</h1><p>Table of Contents</p>"
            f"<ul>{links}</ul><p>{sentence('tools', 1)}</p><ul>{tools}</ul>{body}</body></html>")
    (tmp_path / "pumps.html").write_text(page)
    root, _ = structure_document(parse_file(tmp_path / "pumps.html"))
    text = "\n".join(leaf.text for leaf in leaves(root))
    assert "Table of Contents" not in text and "2.1.1. Foundations" not in text, text
    assert "Torque wrench" in text and all(sentence(topic, 2) in text for _, topic in parts)
    assert [node.title for node in sections(root)][-5:] == [title for title, _ in parts]


def test_contents_lines_with_page_numbers_and_no_leaders(tmp_path):
    """A contents page set as "4.6 Short Commands 44": no leaders, one title broken over two lines;
    the lines name the headings that follow, so they go."""
    chapters = [("1 Getting Started", "start"), ("2 Basic Options", "options"),
                ("3 Line Numbers and Their Placement Beside the Listing in the Margin", "numbers"),
                ("4 Frames", "frames"), ("5 Colours", "colours")]
    contents = [H("Contents", 14)]
    for n, (title, _) in enumerate(chapters):
        if n == 2:
            contents += [P("3 Line Numbers and Their Placement Beside the"), P(f"Listing in the Margin {3 + 2 * n}")]
        else:
            contents.append(P(f"{title} {3 + 2 * n}"))
    make_pdf(tmp_path / "guide.pdf", [contents, *[[H(title, 14), P(sentence(topic, 5))] for title, topic in chapters]])
    root, _ = structure_document(parse_file(tmp_path / "guide.pdf"))
    text = "\n".join(leaf.text for leaf in leaves(root))
    assert "Basic Options 5" not in text and "Beside the" not in text and "Margin 7" not in text, text
    assert all(sentence(topic, 5) in text for _, topic in chapters)


@pytest.mark.parametrize("title, dropped", [("Concept Index", True), ("Exhibit Index", False)])
def test_an_index_whose_entries_run_two_to_a_line(tmp_path, title, dropped):
    """A manual's "Concept Index" set in two columns that the text runs into one line, two entries
    with their leaders and pages to a line, goes; a filing's "Exhibit Index" is a list of documents
    and stays."""
    body = [[H(f"{n} Encoding", 14), P(sentence(f"encoding {n}", 6))] for n in range(1, 5)]
    terms = ["bit strings", "choices", "defaults", "enumerations", "integers", "lengths", "objects", "octets",
             "reals", "sequences", "sets", "tags", "times", "unions"]
    pages = [12, 3, 9, 4, 15, 2, 7]  # in the order of the terms, not of the pages: no contents page
    rows = [P(f"{a} . . . . . . . . . . . {n + 2} {b} . . . . . . . . . . . {page}")
            for n, (a, b, page) in enumerate(zip(terms[::2], terms[1::2], pages))]
    make_pdf(tmp_path / "encoding.pdf", [*body, [H(title, 14), *rows]])
    root, _ = structure_document(parse_file(tmp_path / "encoding.pdf"))
    text = "\n".join(leaf.text for leaf in leaves(root))
    assert ("bit strings" not in text) is dropped, text
    assert all(sentence(f"encoding {n}", 6) in text for n in range(1, 5))


def test_a_statement_s_rows_are_no_index(tmp_path):
    """A balance sheet at the back of a filing: rows of a label and amounts with thousands
    separators, cells parted by wide gaps, read like "term, 2, 352"; they are a table and stay."""
    labels = ["Cash and cash equivalents", "Receivables", "Merchandise inventories", "Other current assets",
              "Property and equipment", "Operating lease assets", "Goodwill", "Deferred taxes", "Other assets",
              "Accounts payable", "Accrued liabilities", "Long-term debt", "Total equity", "Total liabilities"]
    body = [[H(f"Item {n}", 14), P(sentence(f"item {n}", 6))] for n in range(1, 5)]
    rows = [H("Consolidated Balance Sheets", 14)] + [
        P(f"{label} | {n + 1},{352 + n} | {n + 2},{250 + n}") for n, label in enumerate(labels)]
    make_pdf(tmp_path / "filing.pdf", [*body, rows])
    root, _ = structure_document(parse_file(tmp_path / "filing.pdf"))
    text = "\n".join(leaf.text for leaf in leaves(root))
    assert all(label in text for label in labels), text
