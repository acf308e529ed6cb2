"""A plain-text FAQ's numbered headings open sections at every depth: after its contents list, when
its numbers jump ahead, when a question runs past a line, and when no heading titles a parent."""

from __future__ import annotations

import textwrap

from longqa.parse import parse_file
from longqa.structure.tree import sections
from longqa.structure.tree_source import structure_document

ANSWER = ("The answer is given in the paragraphs below, with an example for each of the common "
          "versions of the program and a note on the ones that behave differently.")
QUESTIONS = [  # (number, title), in the order the FAQ gives them
    ("1.", "GENERAL INFORMATION"),
    ("1.1.", "How this FAQ is organized"),
    ("1.2.", "Latest version of the FAQ"),
    ("1.10.", "How do I delete or change a block of text if the block contains a certain regular expression?"),
    ("1.11.", "Where can I get help?"),
    ("2.0", "Ports of the program"),
    ("2.1", "What ports exist?"),
    ("2.1.1", "Why does the compiler complain about the contents of header files distributed by the vendor?"),
    ("2.1.2", "Are there user-contributed ports?"),
    ("2.2", "What about a new port?"),
    ("3.", "KNOWN LIMITATIONS"),
    ("3.1.1", "Maximum line length"),
    ("3.1.2", "Maximum number of files that can be read"),
    ("3.2", "Known incompatibilities"),
]


def faq_text() -> str:
    contents = "\n".join(f"{number} {title}" for number, title in QUESTIONS)
    parts = ["Frequently Asked Questions about the stream editor", "", contents, "", "-" * 30, ""]
    for number, title in QUESTIONS:
        gap = "   " if number.count(".") > 1 and len(title) > 60 else " "  # aligned as some FAQs type them
        parts.append(textwrap.fill(f"{number}{gap}{title}", 72, subsequent_indent="        "))
        parts.append("")
        parts.append(textwrap.fill(ANSWER, 72, initial_indent="   ", subsequent_indent="   "))
        parts.append("")
    return "\n".join(parts)


def test_every_numbered_heading_of_a_faq_opens_a_section(tmp_path):
    path = tmp_path / "faq.txt"
    path.write_text(faq_text())
    root, source = structure_document(parse_file(path))
    assert source == "text"
    titled = {" ".join(node.title.split()): node for node in sections(root)}
    for number, title in QUESTIONS:
        heading = f"{number} {title}"
        assert heading in titled, heading
    # The body's copy, not the contents list's, holds the answer.
    for number, title in QUESTIONS[1:]:
        node = titled[f"{number} {title}"]
        if number not in ("1.", "2.0", "3."):
            assert any(ANSWER[:40] in " ".join(child.text.split()) for child in node.children if child.is_leaf), number
    # Depth follows the numbering, whether or not a heading titles the parent.
    assert titled["3.1.1 Maximum line length"].depth > titled["3. KNOWN LIMITATIONS"].depth


def test_a_contracts_numbered_definitions_stay_text(tmp_path):
    definitions = [f'1.{n} "{term}" means the {term.lower()} named in the schedule to this agreement, as amended.'
                   for n, term in enumerate(["Affiliate", "Dollars", "Field", "Territory", "Product"], start=1)]
    grants = [f"2.{n} {title}. The licensor grants the licensee the rights set out in this clause, subject to "
              f"the terms of this agreement and to the payments it requires." for n, title in
              enumerate(["Licence Grant", "Sublicences", "Retained Rights"], start=1)]
    text = "\n\n".join(["LICENCE AGREEMENT", "ARTICLE 1 DEFINITIONS", *definitions, "ARTICLE 2 GRANT", *grants]) + "\n"
    path = tmp_path / "agreement.txt"
    path.write_text(text)
    root, _ = structure_document(parse_file(path))
    titles = [" ".join(node.title.split()) for node in sections(root)]
    assert not any(title.startswith("1.") for title in titles), titles
    body = " ".join(leaf.text for leaf in root.children[0].children if leaf.is_leaf) + " ".join(
        leaf.text for node in sections(root) for leaf in node.children if leaf.is_leaf)
    assert all(definition in body for definition in definitions)


def test_a_contracts_clauses_numbered_from_zero_stay_paragraphs(tmp_path):
    clause = ("The distributor shall keep the records this agreement requires and shall make them available "
              "to the supplier on request during the term and for two years after it.")
    parts = ["DISTRIBUTOR AGREEMENT"]
    for n, title in enumerate(["DEFINITIONS", "SCOPE", "APPOINTMENT", "ORDERS"], start=1):
        parts += [f"{n}.0 {title}. {n}.1 {clause}", f"{n}.2 {clause}"]
    path = tmp_path / "distributor.txt"
    path.write_text("\n\n".join(parts) + "\n")
    root, _ = structure_document(parse_file(path))
    assert not [node.title for node in sections(root) if node.title[:1].isdigit()]
