"""PDF trees: layout headings, bookmarks checked against the text, filings' items, and the CLI."""

from __future__ import annotations

from pathlib import Path

from longqa.parse.pdf import parse_pdf
from longqa.structure.tree_source import structure_document
from longqa.structure.bookmarks import outline_headings
from longqa.structure.numbering import numbering
from longqa.structure.tree import leaves, sections
from tests.command import run, run_json
from tests.pdfgen import BODY, H, P, Row, make_pdf, sentence

HEADER = "Widget Institute - Internal Report"


def report_pages() -> list[list]:
    return [
        [H("Widget Safety Report", 20), P(sentence("opening")), H("1 Introduction"), P(sentence("introduction", 4))],
        [H("2 Methods"), P(sentence("methods")), H("2.1 Sampling", 11), P(sentence("sampling", 5))],
        [H("2.2 Measurement", 11), P(sentence("measurement", 4)), P(sentence("calibration", 2))],
        [H("3 Results"), P(sentence("results", 6))],
        [],  # a page without any text
        [P(sentence("late results", 3)), H("4 Conclusion"), P(sentence("conclusion", 2))],
    ]


def report(tmp_path: Path, **kwargs) -> Path:
    return make_pdf(tmp_path / "report.pdf", report_pages(), header=HEADER, footer="Page {n} of {total}", **kwargs)


def outline_of(root) -> list[tuple[int, str, int, int]]:
    return [(n.depth, n.title, n.page_start, n.page_end) for n in sections(root)]


def test_layout_headings_make_the_tree(tmp_path):
    doc = parse_pdf(report(tmp_path))
    root, source = structure_document(doc, "auto")
    assert source == "layout"
    assert root.title == "Widget Safety Report" and (root.page_start, root.page_end) == (1, 6)
    assert outline_of(root) == [
        (1, "1 Introduction", 1, 1),
        (1, "2 Methods", 2, 3),
        (2, "2.1 Sampling", 2, 2),
        (2, "2.2 Measurement", 3, 3),
        (1, "3 Results", 4, 6),  # runs over the empty page 5 to the paragraph on page 6
        (1, "4 Conclusion", 6, 6),
    ]
    results = next(n for n in sections(root) if n.title == "3 Results")
    assert [leaf.page_start for leaf in leaves(results)] == [4, 6]
    texts = [leaf.text for leaf in leaves(root)]
    assert not any(HEADER in t or "Page " in t for t in texts)
    calibration = next(leaf for leaf in leaves(root) if "calibration study" in leaf.text)
    assert calibration.page_start == 3 and calibration.path.endswith("2 Methods > 2.2 Measurement")


def test_bold_names_in_a_table_label_rows_and_stay_in_the_text(tmp_path):
    """A table whose rows start with a bold name at body size, after the previous row's smaller
    cells: the names are row labels, kept in the leaves' text, not sections of their own. A bold
    body-size heading after a paragraph still opens its section."""
    justices = [("John Roberts", "born 1955 in Buffalo, appointed by George W. Bush"),
                ("Clarence Thomas", "born 1948 in Pin Point, appointed by George H. W. Bush"),
                ("Elena Kagan", "born 1960 in Manhattan, appointed by Barack Obama"),
                ("Neil Gorsuch", "born 1967 in Denver, appointed by Donald Trump")]
    table = [Row(["Name", "Born", "Appointed by"], size=8, bold=True)]
    for name, cells in justices:
        table += [H(name, BODY, True), P(cells, size=8)]
    history = [P(sentence(f"history part {n}", 2)) for n in range(36)]  # bold body text stays rare
    pages = [[H("Court"), H("History", 12), *history[:12]], history[12:24], history[24:],
             [H("Current justices", 12), *table, P(sentence("seniority", 2)),
              H("Recess appointments", BODY, True), P(sentence("recess", 2))]]
    root, source = structure_document(parse_pdf(make_pdf(tmp_path / "court.pdf", pages)), "auto")
    assert source == "layout"
    titles = [n.title for n in sections(root)]
    assert "Recess appointments" in titles and "Current justices" in titles
    assert not any(name in titles for name, _ in justices)
    current = next(n for n in sections(root) if n.title == "Current justices")
    text = " ".join(leaf.text for leaf in leaves(current))
    assert all(name in text for name, _ in justices)


def test_bold_row_group_labels_stay_inside_their_statement(tmp_path):
    """A balance sheet whose row groups ("Assets", "Liabilities and Equity") are bold lines at
    body size between the table's rows: the statement stays one section holding all its rows.
    The same bold style still opens sections where it follows a paragraph, even where a table
    comes right after it."""
    balance = [H("CONSOLIDATED BALANCE SHEETS", BODY, True), Row(["", "2017", "2016"], bold=True),
               H("Assets", BODY, True), P("Current assets:"),
               Row(["Cash and cash equivalents", "2,822,795", "1,467,576"]),
               Row(["Total current assets", "7,669,974", "5,720,291"]),
               Row(["Total assets", "19,012,742", "13,586,610"]),
               H("Liabilities and Equity", BODY, True), P("Current liabilities:"),
               Row(["Accounts payable", "359,555", "312,842"]),
               Row(["Total current liabilities", "5,466,312", "4,586,657"]),
               H("Stockholders Equity", BODY, True),
               Row(["Retained earnings", "1,731,117", "1,128,603"])]
    prose = [P(sentence(f"results part {n}", 1)) for n in range(72)]  # bold body text stays rare
    # Most of the style's lines are real headings, so the table-label rule by style keeps it.
    topics = [H(name, BODY, True) for name in ("Revenue", "Cost of Revenue", "Marketing", "Income Taxes")]
    pages = [[H("Annual Report", 16), H("Results of Operations", BODY, True), *prose[:18]],
             [topics[0], *prose[18:27], topics[1], *prose[27:36]],
             [topics[2], *prose[36:45], topics[3], *prose[45:54]],
             [*prose[54:], H("Liquidity", BODY, True), Row(["Cash", "1,000", "900"]), P(sentence("liquidity", 1))],
             balance]
    root, source = structure_document(parse_pdf(make_pdf(tmp_path / "filing.pdf", pages)), "auto")
    assert source == "layout"
    titles = [n.title for n in sections(root)]
    assert "CONSOLIDATED BALANCE SHEETS" in titles and "Liquidity" in titles and "Results of Operations" in titles
    assert not {"Assets", "Liabilities and Equity", "Stockholders Equity"} & set(titles)
    statement = next(n for n in sections(root) if n.title == "CONSOLIDATED BALANCE SHEETS")
    text = " ".join(leaf.text for leaf in leaves(statement))
    assert "Total current assets" in text and "Total current liabilities" in text and "Retained earnings" in text


def test_valid_bookmarks_are_the_structure(tmp_path):
    toc = [
        [1, "Introduction", 1], [1, "Methods", 2], [2, "Sampling", 2], [2, "Measurement", 3],
        [1, "Results", 4], [1, "Conclusion", 6],
    ]
    root, source = structure_document(parse_pdf(report(tmp_path, toc=toc)), "auto")
    assert source == "outline"
    # Titles come from the bookmarks; the tree follows their levels.
    assert [(d, t) for d, t, _, _ in outline_of(root)] == [
        (1, "Introduction"), (1, "Methods"), (2, "Sampling"), (2, "Measurement"), (1, "Results"), (1, "Conclusion")]
    assert outline_of(root)[1][2:] == (2, 3)


def test_bookmarks_that_do_not_match_the_text_are_dropped(tmp_path):
    toc = [[1, "Chapter Alpha", 1], [1, "Chapter Beta", 2], [1, "Chapter Gamma", 4], [1, "Introduction", 1]]
    doc = parse_pdf(report(tmp_path, toc=toc))
    assert outline_headings(doc) is None  # 1 of 4 found
    root, source = structure_document(doc, "auto")
    assert source == "layout" and outline_of(root)[0][1] == "1 Introduction"
    # Asked for explicitly, a failed outline falls back to a flat tree, not to another source.
    flat, flat_source = structure_document(parse_pdf(report(tmp_path, toc=toc)), "outline")
    assert flat_source == "flat" and not sections(flat)


def test_bookmark_heading_run_into_its_paragraph_is_split_off(tmp_path):
    pages = [
        [P("Background The widgets were first built in 1990 by a small team. " + sentence("background"))],
        [P("Findings The widgets proved safe in all tests. " + sentence("findings"))],
        [P("Outlook The next widgets arrive next year. " + sentence("outlook"))],
    ]
    toc = [[1, "Background", 1], [1, "Findings", 2], [1, "Outlook", 3]]
    root, source = structure_document(parse_pdf(make_pdf(tmp_path / "runin.pdf", pages, toc=toc)), "auto")
    assert source == "outline"
    assert [(n.title, n.page_start) for n in sections(root)] == [("Background", 1), ("Findings", 2), ("Outlook", 3)]
    first = leaves(sections(root)[1])[0]
    assert first.text.startswith("The widgets proved safe")


def filing_pages() -> list[list]:
    toc_rows = [
        Row(["Item 1.", "Business", "3"], xs=[72, 130, 500]),
        Row(["Item 1A.", "Risk Factors", "4"], xs=[72, 130, 500]),
        Row(["Item 7.", "Management's Discussion and Analysis", "5"], xs=[72, 130, 500]),
        Row(["Item 8.", "Financial Statements", "6"], xs=[72, 130, 500]),
    ]
    b = BODY
    return [
        [H("FORM 10-K", 16), P("Annual report of Widget Holdings Inc. for the fiscal year.")],
        [H("TABLE OF CONTENTS", b), H("PART I", b), *toc_rows[:2], H("PART II", b), *toc_rows[2:]],
        [H("PART I", b), H("Item 1. Business", b), P(sentence("business", 5)), H("Overview", b), P(sentence("overview"))],
        [H("Item 1A. Risk Factors", b), P(sentence("risk", 6))],
        [H("PART II", b), H("Item 7. Management's Discussion and Analysis", b), P(sentence("discussion", 6))],
        [P(sentence("discussion continued", 2)), H("Item 8. Financial Statements", b), P(sentence("statements", 4))],
    ]


def test_filing_items_open_sections_where_they_start_not_in_the_contents(tmp_path):
    doc = parse_pdf(make_pdf(tmp_path / "10k.pdf", filing_pages(), footer="{n}"))
    root, source = structure_document(doc, "layout")
    assert source == "layout"
    items = [(n.depth, n.title, n.page_start, n.page_end) for n in sections(root) if n.title.startswith(("PART", "Item"))]
    assert items == [
        (1, "PART I", 3, 4),
        (2, "Item 1. Business", 3, 3),
        (2, "Item 1A. Risk Factors", 4, 4),
        (1, "PART II", 5, 6),
        (2, "Item 7. Management's Discussion and Analysis", 5, 6),
        (2, "Item 8. Financial Statements", 6, 6),
    ]
    overview = next(n for n in sections(root) if n.title == "Overview")
    assert overview.depth == 3 and overview.page_start == 3
    # The contents page's rows point at pages: kept out of the leaves (and so of retrieval).
    assert not any("Risk Factors | 4" in leaf.text for leaf in leaves(root))


def test_a_quarterly_reports_notes_open_sections(tmp_path):
    """A 10-Q whose notes are bold lines at body size, in a filing that also has larger headings
    (so un-numbered body-size bold lines are not headings there): "Note 1 - ...", "NOTE 2: ..."
    and "Note 3. ..." still open sections under their item, long titles included, and the text of
    each note stays in its own section."""
    b = BODY
    pages = [
        [H("FORM 10-Q", 16), P("Quarterly report of Widget Holdings Inc.")],
        [H("PART I", b), H("Item 1. Financial Statements", b), H("Condensed Statements of Income", 12),
         P(sentence("income statement", 4))],
        [H("Note 1 - Nature of Operations", b), P(sentence("operations", 4)),
         H("NOTE 2: RESTRUCTURING", b), P(sentence("restructuring", 4))],
        [H("Note 3. Acquisitions, Discontinued Operations, Equity-Method Investments and Assets Held for Sale", b),
         P(sentence("acquisitions", 4))],
        [H("Item 2. Management's Discussion and Analysis", b), P(sentence("discussion", 4))],
    ]
    root, source = structure_document(parse_pdf(make_pdf(tmp_path / "10q.pdf", pages, footer="{n}")), "layout")
    assert source == "layout"
    notes = [(n.depth, n.title, n.page_start) for n in sections(root) if n.title.lower().startswith("note")]
    assert notes == [
        (3, "Note 1 - Nature of Operations", 3),
        (3, "NOTE 2: RESTRUCTURING", 3),
        (3, "Note 3. Acquisitions, Discontinued Operations, Equity-Method Investments and Assets Held for Sale", 4),
    ]
    restructuring = next(n for n in sections(root) if n.title == "NOTE 2: RESTRUCTURING")
    assert all("restructuring study" in leaf.text for leaf in leaves(restructuring))


def test_note_numbering_reads_headings_not_remarks():
    assert numbering("Note 12 - Segments").label == "note 12"
    assert numbering("NOTE 4 — INVESTMENTS").kind == "note"
    assert numbering("Note 2. Revenue").label == "note 2"
    for remark in ("Note: Percentages may not add up", "Note 1.5 of the indenture", "Notes 1 and 2 to the table",
                   "Note 3, as amended, applies"):
        number = numbering(remark)
        assert number is None or number.kind != "note", remark


def test_cli_ingests_good_pdfs_and_reports_each_bad_one(tmp_path, db_path):
    good = report(tmp_path)
    encrypted = make_pdf(tmp_path / "locked.pdf", report_pages(), user_password="pw")
    truncated = tmp_path / "cut.pdf"
    truncated.write_bytes(good.read_bytes()[:900])
    fake = tmp_path / "fake.pdf"
    fake.write_text("plain words, not a PDF\n")
    result = run("ingest", good, encrypted, truncated, fake, db=db_path)
    assert result.returncode == 3, result.stderr
    assert "Traceback" not in result.stderr
    lines = [line for line in result.stderr.splitlines() if line.startswith("longqa:")]
    assert len(lines) == 3
    assert any("locked.pdf" in line and "encrypted PDF (password required)" in line for line in lines)
    assert any("cut.pdf" in line and "damaged PDF" in line for line in lines)
    assert any("fake.pdf" in line and "not a valid PDF" in line for line in lines)

    _, docs = run_json("inspect", "docs", db=db_path)
    assert [(d["title"], d["pages"], d["structure"]) for d in docs] == [("Widget Safety Report", 6, "layout")]
    _, tree = run_json("inspect", "tree", "report.pdf", db=db_path)
    assert [(c["title"], c["page_start"], c["page_end"]) for c in tree["children"] if c["kind"] == "section"] == [
        ("1 Introduction", 1, 1), ("2 Methods", 2, 3), ("3 Results", 4, 6), ("4 Conclusion", 6, 6)]
    methods = next(c for c in tree["children"] if c["title"] == "2 Methods")
    assert [c["title"] for c in methods["children"] if c["kind"] == "subsection"] == ["2.1 Sampling", "2.2 Measurement"]
    stored = [n for n in walk_json(tree) if n["kind"] == "paragraph"]
    assert stored and not any(HEADER in n["text"] for n in stored)


def walk_json(node: dict):
    yield node
    for child in node.get("children", []):
        yield from walk_json(child)
