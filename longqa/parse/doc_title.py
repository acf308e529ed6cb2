"""What a document says it is, for its title when its metadata says nothing useful.

A manual page opens with a NAME section whose one line names the program and what it does
("tar - an archiving utility"); printed to PDF or saved as text, its largest or first lines are
the generic section names (NAME, SYNOPSIS, DESCRIPTION), which say nothing about which manual it
is. Those names never title a document; the NAME line does.
"""

from __future__ import annotations

import re

from longqa.parse.blocks import Block

# Section names that any manual, paper or report may have: they never say what a document is.
GENERIC_SECTIONS = frozenset({
    "name", "synopsis", "description", "options", "command line options", "copyright", "author",
    "authors", "bugs", "reporting bugs", "files", "environment", "examples", "see also", "exit status",
    "return value", "return values", "diagnostics", "notes", "history", "standards", "conforming to",
    "availability", "contents", "table of contents", "abstract", "introduction", "overview", "preface",
    "foreword", "summary", "index", "glossary", "references", "bibliography", "appendix",
    "acknowledgements", "acknowledgments", "license",
})
# A manual page's NAME line: one or more names, a dash, what they are ("gzip, gunzip - compress files").
_NAME_LINE = re.compile(r"^[\w.+:@-]+(?:\s*,\s*[\w.+:@-]+)*\s+(?:\\-|[-–—])\s+\S")
# A title that only refers to a manual page ("git-log(1)") says less than its NAME line.
MAN_REFERENCE = re.compile(r"^[\w.+:@-]+\(\d\w{0,3}\)$")
MAX_NAME_LINE = 160


def generic_heading(text: str) -> bool:
    """Whether `text` is only a generic section name ("SYNOPSIS", "Table of Contents", "3. Options")."""
    bare = re.sub(r"^[\d.\s]+", "", " ".join(text.split())).strip(" :.").casefold()
    return bare in GENERIC_SECTIONS


def named_programs(title: str) -> list[str]:
    """The names a title in a NAME line's form gives before its dash ("gzip, gunzip, zcat -
    compress or expand files" → gzip, gunzip, zcat); [] for any other title."""
    if not _NAME_LINE.match(title):
        return []
    names = re.split(r"\s+(?:\\-|[-–—])\s+", title, maxsplit=1)[0]
    return [name.strip() for name in names.split(",") if name.strip()]


def name_line(blocks: list[Block], within: int = 12) -> str | None:
    """The line under a manual page's NAME heading among the first `within` blocks, whitespace
    normalised, or None where the document has no such section. The heading may share its block
    with the line (a page saved as text) or stand in a block of its own (a PDF, a web page)."""
    for index, block in enumerate(blocks[:within]):
        lines = [line for line in block.text.split("\n") if line.strip()]
        if lines and lines[0].startswith("NAME ") and len(lines[0]) > len("NAME "):
            lines = ["NAME", lines[0][len("NAME "):]]  # set in the body's font, the heading runs into its line
        if not lines or lines[0].strip().casefold() != "name":
            continue
        if len(lines) == 1 and index + 1 < len(blocks):
            lines += [line for line in blocks[index + 1].text.split("\n") if line.strip()]
        line = " ".join(lines[1].split()) if len(lines) > 1 else ""
        return line if _NAME_LINE.match(line) and len(line) <= MAX_NAME_LINE else None
    return None
