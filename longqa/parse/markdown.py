"""Markdown: ATX (`#`) and setext headings become heading blocks; fenced code stays one block, as
written; a hard-wrapped paragraph is rejoined as in plain text (text.py); inline syntax (links,
emphasis, code-span marks) is rendered to the text a reader sees (markdown_inline.py)."""

from __future__ import annotations

import re
from pathlib import Path

from longqa.parse.blocks import Block, ParsedDocument
from longqa.parse.decode import read_text
from longqa.parse.doc_title import generic_heading, name_line
from longqa.parse.markdown_inline import definitions, drop_definitions, render, tex_quotes
from longqa.parse.text import Wrap, paragraphs

# The closing run of "#"s is stripped in code: a lazy group before "[ \t#]*$" backtracks
# quadratically over a long line of spaces and hashes.
_ATX = re.compile(r"^ {0,3}(#{1,6})[ \t]+(\S.*)$")
_SETEXT = re.compile(r"^ {0,3}(=+|-+)[ \t]*$")
_FENCE = re.compile(r"^ {0,3}(```|~~~)")


def markdown_blocks(text: str, page: int = 1) -> list[Block]:
    blocks: list[Block] = []
    buffer: list[str] = []
    in_fence = False
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    wrap = Wrap.of(text)
    labels, quotes = definitions(text), tex_quotes(text)

    def flush() -> None:
        written = drop_definitions("\n".join(buffer))
        blocks.extend(Block(text=shown, page=page) for p in paragraphs(written, wrap) if (shown := render(p, labels, quotes).strip()))
        buffer.clear()

    for line in text.split("\n"):
        if _FENCE.match(line):
            in_fence = not in_fence
            if in_fence:
                flush()
            buffer.append(line)
            if not in_fence:  # the code as written, blank lines and all: one block
                blocks.append(Block(text="\n".join(buffer).strip("\n"), page=page))
                buffer.clear()
            continue
        if in_fence:
            buffer.append(line)
            continue
        atx = _ATX.match(line)
        setext = _SETEXT.match(line)
        if atx:
            flush()
            rest = atx.group(2)
            title = rest.rstrip(" \t#") or rest[:1]  # "# ###" is titled "#"
            blocks.append(Block(text=render(title, labels, quotes).strip() or title.strip(), page=page, heading=len(atx.group(1))))
        elif setext and buffer and buffer[-1].strip() and (len(buffer) == 1 or not buffer[-2].strip()):
            title = buffer.pop().strip()
            flush()
            blocks.append(Block(text=render(title, labels, quotes).strip() or title, page=page,
                                heading=1 if setext.group(1)[0] == "=" else 2))
        else:
            buffer.append(line)
    if in_fence:  # a fence never closed runs to the end of the text
        blocks.append(Block(text="\n".join(buffer).strip("\n"), page=page))
    else:
        flush()
    return blocks


def parse_markdown(path: Path, text: str | None = None) -> ParsedDocument:
    text = read_text(path) if text is None else text
    blocks = markdown_blocks(text)
    title = name_line(blocks) or next(
        (b.text for b in blocks if b.heading == 1 and not generic_heading(b.text)), path.stem)
    return ParsedDocument(path=path, title=title, pages=1, blocks=blocks, format="markdown")
