"""Plain text and markdown parsing: encodings, paragraphs, pages, headings."""

from pathlib import Path

import pytest

from longqa.errors import InputError
from longqa.parse import parse_file
from longqa.structure.tree_source import structure_document
from longqa.structure.tree import leaves, sections, walk


def write(tmp_path: Path, name: str, data) -> Path:
    path = tmp_path / name
    path.write_bytes(data if isinstance(data, bytes) else data.encode("utf-8"))
    return path


def test_text_paragraphs_and_form_feed_pages(tmp_path):
    doc = parse_file(write(tmp_path, "a.txt", "First para\nstill first.\n\nSecond.\fThird on page two."))
    assert [b.text for b in doc.blocks] == ["First para\nstill first.", "Second.", "Third on page two."]
    assert [b.page for b in doc.blocks] == [1, 1, 2]
    assert doc.pages == 2


@pytest.mark.parametrize(
    "data",
    [
        "Café déjà vu".encode("utf-16"),
        "Café déjà vu".encode("utf-8-sig"),
        "Café déjà vu".encode("cp1252"),
    ],
)
def test_text_in_other_encodings_decodes(tmp_path, data):
    doc = parse_file(write(tmp_path, "enc.txt", data))
    assert doc.blocks[0].text == "Café déjà vu"


def test_undecodable_bytes_are_replaced_not_fatal(tmp_path):
    # 0x81 is undefined in cp1252 and invalid as UTF-8: it must become U+FFFD, not an error.
    doc = parse_file(write(tmp_path, "bad.txt", b"Good text \x81 more text"))
    assert "Good text" in doc.blocks[0].text and "\ufffd" in doc.blocks[0].text


def test_binary_and_empty_files_are_rejected_with_a_reason(tmp_path):
    with pytest.raises(InputError, match="binary"):
        parse_file(write(tmp_path, "x.txt", b"\x00\x01\x02ELF\x00" * 50))
    with pytest.raises(InputError, match="empty"):
        parse_file(write(tmp_path, "e.md", "   \n\n  "))
    with pytest.raises(InputError, match="not a text document: a ZIP archive"):
        parse_file(write(tmp_path, "x.docx", b"PK\x03\x04\x14\x00\x06\x00\x00\x00!\x00" * 30))


MARKDOWN = """# Field Guide

Opening words of the guide that introduce the subject at length.

## Birds

Birds have feathers.

### Owls

Owls hunt at night.

```python
# not a heading
x = 1

y = 2
```

## Fish

Fish swim.
"""


def test_markdown_headings_become_nested_sections(tmp_path):
    doc = parse_file(write(tmp_path, "guide.md", MARKDOWN))
    root, source = structure_document(doc)
    assert source == "markdown"
    assert root.title == "Field Guide"
    top = [n for n in root.children if n.kind == "section"]
    assert [n.title for n in top] == ["Birds", "Fish"]
    owls = top[0].children[-1]
    assert owls.kind == "subsection" and owls.title == "Owls" and owls.depth == 2
    code = [leaf for leaf in leaves(root) if "not a heading" in leaf.text]
    assert len(code) == 1 and "y = 2" in code[0].text  # the fence stays one block
    assert all(leaf.path.startswith("Field Guide") for leaf in leaves(root))


def test_plain_text_numbered_headings(tmp_path):
    text = "Report\n\n1. Introduction\n\nWe study things.\n\n2. Methods\n\nWe measured.\n\n2.1 Sampling\n\nRandomly.\n"
    root, source = structure_document(parse_file(write(tmp_path, "r.txt", text)))
    assert source == "text"
    assert [s.title for s in sections(root)] == ["1. Introduction", "2. Methods", "2.1 Sampling"]
    assert sections(root)[2].depth == 2


def test_flat_when_no_headings(tmp_path):
    text = "\n\n".join(f"This is sentence number {i} of a document without any structure." for i in range(6))
    root, source = structure_document(parse_file(write(tmp_path, "flat.txt", text)))
    assert source == "flat"
    assert all(n.kind == "paragraph" for n in root.children)
    assert root.tokens == sum(leaf.tokens for leaf in leaves(root))
    assert [n.ord for n in walk(root)] == list(range(len(list(walk(root)))))
