"""A PDF options table (option / type / default / description) is read one row a unit: a description
wrapped onto a second line under its column stays in its row, no row runs on into the next, and
every row can be read with the table's column headers, also where the table goes on in a later leaf."""

from __future__ import annotations

from pathlib import Path

import pymupdf

from longqa.ingest import Ingestor
from longqa.parse import parse_file
from longqa.store import open_db
from longqa.store.documents import document_ids
from longqa.store.nodes import load_tree
from longqa.text import sentences
from longqa.text.table_rows import row_header
from longqa.tree_types import leaves

HEADER = ("Option", "Type", "Default", "Description")
HEADER_ROW = " | ".join(HEADER)
COLUMNS = (72, 150, 210, 290)
DESCRIPTION_WIDTH = 540 - COLUMNS[3]
# A backup tool's configuration options, as its manual lists them.
OPTIONS = [
    ("compress", "boolean", "true", "Compress the archive with gzip before it is written to the backup volume."),
    ("level", "integer", "6", "Compression level from 1 (fastest) to 9 (smallest)."),
    ("exclude", "list", "none", "Patterns of file names that are left out of the archive, matched against "
                                "the path relative to the backup root."),
    ("retries", "integer", "3", "Times a failed upload is tried again."),
    ("timeout", "seconds", "30", "Seconds to wait for the storage server before the upload counts as failed."),
    ("schedule", "string", "daily", "When the backup runs: hourly, daily or weekly, at the time set by start."),
    ("start", "time", "02:00", "Local time at which a scheduled backup begins."),
    ("keep", "integer", "14", "Number of archives kept on the volume; older archives are deleted after a "
                              "successful backup."),
    ("verify", "boolean", "false", "Read the archive back after writing it and compare its checksum with "
                                   "the one computed while writing."),
    ("bandwidth", "integer", "0", "Upload limit in kilobytes per second; 0 means no limit."),
    ("notify", "address", "none", "Mail address that receives a report when a backup fails."),
    ("log", "path", "backup.log", "File to which each run appends its report."),
    ("quiet", "boolean", "false", "Print nothing but errors while the backup runs."),
    ("encrypt", "boolean", "false", "Encrypt the archive with the key named by keyfile before it leaves the "
                                    "machine."),
    ("keyfile", "path", "none", "File holding the encryption key; it must be readable by the backup user "
                                "only."),
    ("lock", "path", "backup.lock", "File that keeps a second backup from starting while one runs."),
]


def _wrap(text: str, size: float) -> list[str]:
    lines, current = [], ""
    for word in text.split():
        trial = f"{current} {word}" if current else word
        if current and pymupdf.get_text_length(trial, fontname="helv", fontsize=size) > DESCRIPTION_WIDTH:
            lines.append(current)
            current = word
        else:
            current = trial
    return lines + [current]


def options_pdf(path: Path, options=OPTIONS) -> Path:
    """A manual page with an options table: a bold header row, then a row per option with its
    description wrapped under the description column, rows set as close as a paragraph's lines."""
    doc = pymupdf.open()
    page = doc.new_page(width=612, height=792)
    page.insert_text((72, 90), "Backup Tool Manual", fontsize=18, fontname="hebo")
    page.insert_text((72, 125), "Configuration options", fontsize=14, fontname="hebo")
    y = 150.0
    for line in ("The options below are read from the configuration file when the tool starts. Each",
                 "option is set on a line of its own, and an option that is not set takes its default."):
        page.insert_text((72, y), line, fontsize=10, fontname="helv")
        y += 12.5
    y += 10
    for x, cell in zip(COLUMNS, HEADER):
        page.insert_text((x, y), cell, fontsize=10, fontname="hebo")
    for option, kind, default, description in options:
        y += 12.5
        for x, cell in zip(COLUMNS[:3], (option, kind, default)):
            page.insert_text((x, y), cell, fontsize=10, fontname="helv")
        for number, line in enumerate(_wrap(description, 10)):
            y += 12.5 if number else 0.0
            page.insert_text((COLUMNS[3], y), line, fontsize=10, fontname="helv")
    y += 30
    page.insert_text((72, y), "Options not listed here are ignored, with a warning in the log.", fontsize=10,
                     fontname="helv")
    doc.save(path)
    doc.close()
    return path


def _row(option, kind, default, description) -> str:
    return " | ".join((option, kind, default, description))


def test_pdf_table_rows_are_whole_lines_with_wrapped_cells_joined(tmp_path):
    assert any(len(_wrap(d, 10)) > 1 for *_, d in OPTIONS)  # some descriptions do wrap
    doc = parse_file(options_pdf(tmp_path / "backup.pdf"))
    table = [b for b in doc.blocks if b.table]
    assert len(table) == 1, [b.text for b in doc.blocks]
    lines = table[0].text.split("\n")
    assert lines == [HEADER_ROW] + [_row(*option) for option in OPTIONS]
    # Each row is one sentence of its own: nothing of a neighbouring row runs into it.
    found = [table[0].text[s:e] for s, e in sentences.split(table[0].text)]
    assert found == lines


def test_every_stored_row_reaches_the_table_header(tmp_path, db_path):
    path = options_pdf(tmp_path / "backup.pdf")
    result = Ingestor(db=open_db(db_path)).ingest(path)
    assert result.status == "added", result.error
    db = open_db(db_path, readonly=True)
    (doc_id,) = document_ids(db)
    table_leaves = [leaf for leaf in leaves(load_tree(db, doc_id)) if " | " in leaf.text]
    assert len(table_leaves) > 1  # the table is longer than a leaf: the later leaf starts mid-table
    assert not table_leaves[1].text.startswith(HEADER_ROW)
    rows = {}
    for leaf in table_leaves:
        for start, end in sentences.split(leaf.text):
            if " | " in leaf.text[start:end]:
                rows[leaf.text[start:end]] = row_header(leaf, start)
    expected = {_row(*option): HEADER_ROW for option in OPTIONS}
    assert {row: header for row, header in rows.items() if row != HEADER_ROW} == expected
    assert rows[HEADER_ROW] is None  # the header row has no header above it
    for leaf in leaves(load_tree(db, doc_id)):  # prose has no column headers, in or out of a table's leaf
        for start, end in sentences.split(leaf.text):
            if " | " not in leaf.text[start:end]:
                assert row_header(leaf, start) is None, leaf.text[start:end]


def test_the_reader_reads_a_table_row_under_its_column_headers(tmp_path, db_path):
    from tests.ask_support import make_pipeline
    from tests.fakes import FakeReader

    Ingestor(db=open_db(db_path)).ingest(options_pdf(tmp_path / "backup.pdf"))
    pipeline = make_pipeline(open_db(db_path), FakeReader("backup.lock [1]"))
    # the lock option's row is in the leaf that goes on with the table, without its header row
    result = pipeline.answer("Which file keeps a second backup from starting while one runs?")
    (prompt,) = [prompt for kind, prompt in pipeline.generator.calls if kind == "generate"]
    row = _row("lock", "path", "backup.lock", OPTIONS[-1][3])
    assert row in prompt and HEADER_ROW in prompt[:prompt.index(row)]
    assert result.answer.startswith("backup.lock [")
