"""Hard-wrapped plain text and markdown: paragraphs rejoined, sentences whole, numbered headings in
sequence found whatever their length (run-in titles split off their paragraphs)."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from longqa.text import sentences
from longqa.parse import parse_file
from longqa.structure.tree import leaves, sections
from longqa.structure.tree_source import structure_document


def wrapped(paragraph: str, width: int = 72, indent: str = "") -> str:
    return textwrap.fill(paragraph, width, initial_indent=indent, subsequent_indent=indent)


AGGREGATE = (
    "A compilation of a covered work with other separate and independent works, which are not by their "
    "nature extensions of the covered work, and which are not combined with it such as to form a larger "
    "program, in or on a volume of a storage or distribution medium, is called an aggregate if the "
    "compilation and its resulting copyright are not used to limit the access or legal rights of the "
    "compilation's users beyond what the individual works permit."
)
CONVEY = (
    "You may convey verbatim copies of the Program's source code as you receive it, in any medium, "
    "provided that you conspicuously and appropriately publish on each copy an appropriate copyright "
    "notice. You may charge any price or no price for each copy that you convey, and you may offer "
    "support or warranty protection for a fee."
)


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_wrapped_paragraphs_are_rejoined_and_sentences_are_whole(tmp_path):
    text = "\n\n".join([wrapped(AGGREGATE), wrapped(CONVEY)]) + "\n"
    doc = parse_file(write(tmp_path, "licence.txt", text))
    assert [block.text for block in doc.blocks] == [AGGREGATE, CONVEY]
    spans = sentences.split(doc.blocks[1].text)
    assert [doc.blocks[1].text[a:b] for a, b in spans] == [
        CONVEY[: CONVEY.index(" You may charge")], CONVEY[CONVEY.index("You may charge"):]]


def test_text_written_a_paragraph_per_line_keeps_its_lines(tmp_path):
    lines = [AGGREGATE, "Notes", CONVEY, AGGREGATE.upper(), "End of terms."]
    doc = parse_file(write(tmp_path, "plain.txt", "\n".join(lines)))
    assert [block.text for block in doc.blocks] == lines


def test_lists_numbers_and_tables_keep_their_breaks(tmp_path):
    intro = ("The work must carry prominent notices stating that it is\n"
             "released under this License and any conditions added under section\n"
             "7. This requirement modifies the requirement in section 4\n"
             "to keep intact all notices.")
    items = "\n".join(["You must give recipients:", "(a) a copy of this License;",
                       "(b) notice of any changes you made; and", "(c) the source code."])
    table = "Fee      Amount\nCopying  10 dollars\nPostage  2 dollars"
    filler = "\n\n".join(wrapped(CONVEY, 60) for _ in range(3))
    doc = parse_file(write(tmp_path, "terms.txt", "\n\n".join([intro, items, table, filler])))
    texts = [block.text for block in doc.blocks]
    assert texts[0] == " ".join(intro.split())  # "section\n7. This" is one sentence
    assert texts[1:5] == ["You must give recipients:", "(a) a copy of this License;",
                          "(b) notice of any changes you made; and", "(c) the source code."]
    assert texts[5] == table


def test_hyphen_at_a_line_end_is_undone_only_for_words_the_text_uses(tmp_path):
    body = ("The manual covers installation of the software on every supported system and explains "
            "well-known settings.")
    text = "\n".join([
        "The installation guide explains the steps needed on a new computer for the soft-",
        "ware to start, and which packages the instal-",
        "lation needs before the first run of the program on a computer that is well-",
        "known to its owner.",
    ]) + "\n\n" + "\n\n".join(wrapped(body) for _ in range(3))
    doc = parse_file(write(tmp_path, "guide.txt", text))
    first = doc.blocks[0].text
    assert "the software to start" in first and "the installation needs" in first
    assert "is well-known to its owner." in first
    assert "\n" not in first


def test_markdown_paragraphs_are_rejoined_and_code_is_kept(tmp_path):
    code = "```\nmake install\nmake check\n```"
    text = "# Building\n\n" + wrapped(CONVEY) + "\n\n" + code + "\n\n" + wrapped(AGGREGATE) + "\n"
    doc = parse_file(write(tmp_path, "build.md", text))
    assert [block.text for block in doc.blocks] == ["Building", CONVEY, code, AGGREGATE]


LIABILITY = (
    "In no event shall the Supplier be liable to the Buyer for damages, including any direct, indirect, "
    "special, incidental, or consequential damages of any character arising as a result of this agreement "
    "or out of the use or inability to use the goods (including but not limited to damages for loss of "
    "goodwill, work stoppage, equipment failure or malfunction, or any and all other commercial damages "
    "or losses), unless required by applicable law (such as deliberate and grossly negligent acts) or "
    "agreed to in writing, whether in contract, in tort or otherwise, even if the Supplier has been advised of the possibility of such damages."
)


def test_a_long_sentence_of_words_is_kept_whole_and_a_flattened_table_is_cut():
    text = LIABILITY + " The Buyer signs below."
    assert len(LIABILITY) > sentences.MAX_SENTENCE_CHARS
    assert [text[a:b] for a, b in sentences.split(text)] == [LIABILITY, "The Buyer signs below."]
    table = " ".join(f"Pump {n} | {n * 3.5} | {n * 12} | {n + 1990}" for n in range(1, 40)) + "."
    pieces = sentences.split(table)
    assert len(pieces) > 1 and all(b - a <= sentences.MAX_SENTENCE_CHARS for a, b in pieces)


def test_a_comma_runs_on_before_a_capital_in_prose_and_not_in_verse(tmp_path):
    warranty = ("The Supplier provides the goods without any promise beyond this clause and on an AS IS BASIS, "
                "WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied, including any "
                "warranties of fitness for a particular purpose.")
    lines = textwrap.wrap(warranty, 72)
    at = next(i for i, line in enumerate(lines) if "WITHOUT" in line)
    lines[at - 1:at + 1] = [lines[at - 1] + " " + lines[at].split("WITHOUT")[0].strip(),
                            "WITHOUT" + lines[at].split("WITHOUT", 1)[1]]
    lines = [line.rstrip() for line in lines]
    assert lines[at - 1].endswith(",") and lines[at].startswith("WITHOUT")
    verse = "The river runs beneath the hill,\nAnd in the valley all is still,\nThe mill is quiet, and the field,"
    text = "\n\n".join(["\n".join(lines), verse, wrapped(CONVEY), wrapped(AGGREGATE)]) + "\n"
    doc = parse_file(write(tmp_path, "supply.txt", text))
    assert doc.blocks[0].text == warranty
    assert doc.blocks[1].text == verse


def test_a_numbered_term_runs_on_into_its_definition(tmp_path):
    terms = [('1.1. "Buyer"', "means the party named in the order form that pays for the goods."),
             ('1.2. "Goods"', "means the pumps, valves and spare parts listed in the schedule.")]
    parts = [f"    {term}\n" + wrapped(body, 72, "        ") for term, body in terms]
    doc = parse_file(write(tmp_path, "terms.txt", "\n\n".join([wrapped(CONVEY), *parts, wrapped(AGGREGATE)]) + "\n"))
    texts = [block.text for block in doc.blocks]
    assert [f"{term} {body}" for term, body in terms] == texts[1:3]
    assert [texts[1][a:b] for a, b in sentences.split(texts[1])] == [texts[1]]


CLAUSES = [
    ("Definitions.", "In this agreement the Supplier is the party that delivers the goods and the "
     "Buyer is the party that pays for them under the terms below."),
    ("Delivery of Goods to the Premises of the Buyer Named in the Order Form Above.",
     "The Supplier delivers the goods to the premises named in the order within thirty days of the "
     "order and bears the risk of loss until the goods are received."),
    ("Payment.", "The Buyer pays each invoice within forty-five days of receiving it, by bank "
     "transfer to the account the Supplier names on the invoice."),
    ("Warranty.", "The Supplier warrants that the goods are free of defects in material and "
     "workmanship for twelve months after delivery."),
]


@pytest.mark.parametrize("indent", ["", "   "])
def test_numbered_run_in_headings_in_sequence_are_found(tmp_path, indent):
    parts = ["SUPPLY AGREEMENT"]
    for number, (title, body) in enumerate(CLAUSES, start=1):
        head = f"{number}. {title}"
        if number % 2:  # a run-in title: the clause's first sentence
            parts.append(wrapped(f"{head} {body}", 72, indent))
        else:  # a title on a line of its own, over eight words here
            parts.append(indent + head)
            parts.append(wrapped(body, 72, indent))
    root, source = structure_document(parse_file(write(tmp_path, "supply.txt", "\n\n".join(parts) + "\n")))
    assert source == "text"
    assert [node.title for node in sections(root)] == [f"{n}. {t}" for n, (t, _) in enumerate(CLAUSES, 1)]
    for node, (_, body) in zip(sections(root), CLAUSES):
        assert [leaf.text for leaf in leaves(node)] == [body]


def test_numbers_out_of_sequence_stay_body_text(tmp_path):
    steps = [wrapped(f"{n}. {part}. Check the {part.lower()} and note the reading in the log before the "
                     "next step of the procedure is started by the operator on duty.")
             for n, part in [(1, "Pressure"), (5, "Valves"), (2, "Pumps")]]
    root, _ = structure_document(parse_file(write(tmp_path, "steps.txt", "\n\n".join(steps))))
    assert [node.title for node in sections(root)] == ["1. Pressure.", "2. Pumps."]
    assert any("5. Valves. Check the valves" in leaf.text for leaf in leaves(sections(root)[0]))


LICENCES = Path("/usr/share/common-licenses")


@pytest.mark.parametrize("name, numbers", [("GPL-3", range(0, 18)), ("Apache-2.0", range(1, 10))])
def test_real_licence_sections_and_paragraphs(name, numbers):
    path = LICENCES / name
    if not path.is_file():
        pytest.skip(f"{path} is not on this machine (Debian's base-files ships it)")
    root, source = structure_document(parse_file(path))
    assert source == "text"
    numbered = [node.title for node in sections(root) if node.title[:1].isdigit()]
    assert [int(title.split(".")[0]) for title in numbered] == list(numbers)
    body = [leaf.text for leaf in leaves(root)]
    assert not any(" an\naggregate" in text or "of this License; and\n" in text for text in body)
    # the licence's own titles ("TERMS AND CONDITIONS", the centred name) open sections or name it
    assert not any("TERMS AND CONDITIONS" in text or "Version 3, 29 June 2007" in text for text in body)


def centred(line: str, width: int = 72) -> str:
    return line.center(width).rstrip()


def test_titles_beside_numbered_sections_stay_out_of_the_leaves(tmp_path):
    """A licence's own titles: a centred title block, a centred preamble title, lines in capitals, an
    appendix and an underlined exhibit; the first names the document, the others open sections, and
    none is left in a leaf. A sentence that leads into an address shown on its own line runs on."""
    parts = [centred("SUPPLY AGREEMENT") + "\n" + centred("Version 2, 3 March 2021"), centred("Preamble"),
             wrapped(CONVEY), "   TERMS AND CONDITIONS"]
    for number, (title, body) in enumerate(CLAUSES, start=1):
        parts += [f"{number}. {title}", wrapped(body)]
    parts += ["   END OF TERMS AND CONDITIONS", centred("How to Apply These Terms to Your Orders"), wrapped(AGGREGATE),
              "APPENDIX: How to name the Buyer in an order form placed under these terms.",
              "The form of the order is published by the Supplier. You may obtain a copy of the form at",
              "       https://supplier.example/order-form", "Exhibit A - Delivery Addresses\n------------------------------",
              wrapped(CLAUSES[1][1])]
    doc = parse_file(write(tmp_path, "supply.txt", "\n\n".join(parts) + "\n"))
    root, _ = structure_document(doc)
    assert doc.title == "SUPPLY AGREEMENT Version 2, 3 March 2021"
    titles = [node.title for node in sections(root)]
    assert titles == ["Preamble", "TERMS AND CONDITIONS", *[f"{n}. {t}" for n, (t, _) in enumerate(CLAUSES, 1)],
                      "END OF TERMS AND CONDITIONS", "How to Apply These Terms to Your Orders",
                      "APPENDIX: How to name the Buyer in an order form placed under these terms.",
                      "Exhibit A - Delivery Addresses"]
    texts = [leaf.text for leaf in leaves(root)]
    assert not any(title in text for text in texts for title in ["SUPPLY AGREEMENT", "Preamble", "CONDITIONS"])
    assert CONVEY in texts and AGGREGATE in texts
    assert "You may obtain a copy of the form at https://supplier.example/order-form" in "\n".join(texts)


def test_a_centred_preamble_title_counts_though_the_clauses_start_late(tmp_path):
    """Clauses that start after a long list of definitions (past a quarter of the text) still leave
    the centred titles above them their meaning: the first names the document, "Preamble" opens a
    section, and neither is left in a leaf."""
    definitions = [f'"{term}" means {meaning}.' for term, meaning in [
        ("Buyer", "the person who places an order"), ("Supplier", "the company named on the order form"),
        ("Goods", "what the order lists"), ("Delivery", "the handing over of the Goods at the address given"),
        ("Order", "a request for Goods made on the form"), ("Price", "the amount the order states"),
        ("Working Day", "any day other than a weekend or a public holiday"), ("Site", "the address of delivery")]]
    parts = [centred("SUPPLY TERMS"), centred("Preamble"), wrapped(CONVEY), "Definitions:", *definitions]
    for number, (title, body) in enumerate(CLAUSES, start=1):
        parts += [f"{number}. {title}", wrapped(body)]
    doc = parse_file(write(tmp_path, "terms.txt", "\n\n".join(parts) + "\n"))
    root, _ = structure_document(doc)
    assert doc.title == "SUPPLY TERMS"
    assert [node.title for node in sections(root)] == ["Preamble", *[f"{n}. {t}" for n, (t, _) in enumerate(CLAUSES, 1)]]
    texts = [leaf.text for leaf in leaves(root)]
    assert not any(title in text for text in texts for title in ["SUPPLY TERMS", "Preamble"])


def test_a_title_line_inside_a_numbered_section_stays_its_text(tmp_path):
    """Between numbered sections numbering is the stronger signal: a short capitalised line in
    one ("Delivery Terms") is the section's text, not a section of its own."""
    parts = []
    for number, (title, body) in enumerate(CLAUSES, start=1):
        parts += [f"{number}. {title}", wrapped(body)]
    parts.insert(3, "Delivery Terms")
    root, _ = structure_document(parse_file(write(tmp_path, "supply.txt", "\n\n".join(parts) + "\n")))
    assert [node.title for node in sections(root)] == [f"{n}. {t}" for n, (t, _) in enumerate(CLAUSES, 1)]
    assert "Delivery Terms\n" in "\n".join(leaf.text for leaf in leaves(sections(root)[1]))


def test_a_centred_title_between_numbered_sections_opens_one(tmp_path):
    """A title the layout centres between two numbered clauses ("LIABILITY" over the last ones) is a
    title, not the clause's text; a plain capitalised line there still is text."""
    parts = []
    for number, (title, body) in enumerate(CLAUSES, start=1):
        if number == 4:
            parts.append(centred("LIABILITY"))
        parts += [f"{number}. {title}", wrapped(body)]
    parts.insert(3, "Delivery Terms")
    root, _ = structure_document(parse_file(write(tmp_path, "supply.txt", "\n\n".join(parts) + "\n")))
    numbered = [f"{n}. {t}" for n, (t, _) in enumerate(CLAUSES, 1)]
    assert [node.title for node in sections(root)] == numbered[:3] + ["LIABILITY"] + numbered[3:]
    texts = [leaf.text for leaf in leaves(root)]
    assert not any("LIABILITY" in text for text in texts) and "Delivery Terms\n" in "\n".join(texts)


def test_markdown_code_under_a_sentence_stays_code(tmp_path):
    """In markdown a line indented under a paragraph is code, even one word after a sentence that
    leads into it: it is not run on into the sentence as a plain text's address is."""
    text = "# Pump controller\n\n" + wrapped(CONVEY) + "\n\n" + wrapped(
        "To build the firmware for the pump controller from its sources on a workstation, run") + "\n\n    make\n"
    doc = parse_file(write(tmp_path, "build.md", text))
    assert [block.text for block in doc.blocks][-1] == "make"


def test_capitals_in_a_book_with_a_licence_appended_and_repeated_heads_stay_text(tmp_path):
    """A book whose only numbered sections are the licence appended to it: the book's lines in
    capitals and its centred captions are its text. In a contract, a line found atop every page
    ("Exhibit 10.38") is no section either."""
    book = [centred("[Illustration]"), "THE TALE OF THE MILL", wrapped(CONVEY), centred("[Illustration]")] * 6
    licence = [f"{n}. {title}\n\n{wrapped(body)}" for n, (title, body) in enumerate(CLAUSES, start=1)]
    root, _ = structure_document(parse_file(write(tmp_path, "mill.txt", "\n\n".join(book + licence) + "\n")))
    assert [node.title for node in sections(root)] == [f"{n}. {t}" for n, (t, _) in enumerate(CLAUSES, 1)]
    contract = [part for n, (title, body) in enumerate(CLAUSES, start=1)
                for part in ("Exhibit 10.38", f"{n}. {title}", wrapped(body))]
    root, _ = structure_document(parse_file(write(tmp_path, "supply.txt", "\n\n".join(contract) + "\n")))
    assert [node.title for node in sections(root)] == [f"{n}. {t}" for n, (t, _) in enumerate(CLAUSES, 1)]


TERMS = [
    "This Agreement applies to any order placed with the Supplier by a Buyer who has accepted these terms in "
    "writing, and to every delivery made under such an order. Each order is a separate contract.",
    "You may return goods that arrive damaged within fourteen days of delivery, provided that you keep the "
    "packaging and report the damage to the carrier as well. The Supplier then replaces the goods at its cost.",
    "The Supplier may change these terms from time to time.",
    "THE GOODS ARE SUPPLIED AS DESCRIBED IN THE ORDER AND WITHOUT ANY OTHER WARRANTY, TO THE EXTENT PERMITTED BY "
    "THE LAW OF THE COUNTRY IN WHICH THE BUYER HAS ITS PREMISES.",
]
TERMS_AFTER = ("The Supplier publishes a summary of changes with each new version of these terms, and orders "
               "placed before a change are delivered under the terms in force when they were placed.")


def test_numbered_clauses_without_titles_head_sections(tmp_path):
    """A text divided into clauses numbered from 0 that carry no title sentence: each clause heads a
    section titled by its first sentence (cut to its first words when long) and keeps its whole text;
    a paragraph of a clause stays in it. A clause of one short sentence is a title line, as "2.
    Payment." is."""
    parts = [centred("SUPPLY TERMS"), wrapped(CONVEY)]
    for number, clause in enumerate(TERMS):
        parts.append(wrapped(f"{number}. {clause}", 72, "  "))
        if number == 2:
            parts.append(wrapped(TERMS_AFTER))
    root, source = structure_document(parse_file(write(tmp_path, "terms", "\n\n".join(parts) + "\n")))
    assert source == "text"
    assert [node.title for node in sections(root)] == [
        "0. This Agreement applies to any order placed with the…",
        "1. You may return goods that arrive damaged within fourteen…",
        "2. The Supplier may change these terms from time to time.",
        "3. THE GOODS ARE SUPPLIED AS DESCRIBED IN THE ORDER AND…",
    ]
    assert [[leaf.text for leaf in leaves(node)] for node in sections(root)] == [
        [TERMS[0]], [TERMS[1]], [TERMS_AFTER], [TERMS[3]]]
    assert [leaf.text for leaf in root.children if leaf.kind == "paragraph"] == [CONVEY]


def test_a_numbered_list_inside_a_longer_text_stays_its_text(tmp_path):
    """Long numbered items in sequence that hold only part of a text (the conditions of a renewal
    in a report) are its paragraphs, not sections."""
    items = [f"{number}. {clause}" for number, clause in enumerate([TERMS[0], TERMS[1], TERMS[3]], start=1)]
    parts = [wrapped(AGGREGATE), wrapped(CONVEY)] * 3 + [wrapped(item) for item in items] + [wrapped(AGGREGATE)] * 4
    root, _ = structure_document(parse_file(write(tmp_path, "report.txt", "\n\n".join(parts) + "\n")))
    assert sections(root) == []
    assert "\n\n".join(items) in "\n\n".join(leaf.text for leaf in leaves(root))


@pytest.mark.parametrize("name, numbers", [("GPL-2", range(0, 13)), ("LGPL-2.1", range(0, 17)),
                                           ("Artistic", range(1, 11))])
def test_real_licence_clauses_without_titles_head_sections(name, numbers):
    path = LICENCES / name
    if not path.is_file():
        pytest.skip(f"{path} is not on this machine (Debian's base-files ships it)")
    root, _ = structure_document(parse_file(path))
    numbered = [node for node in sections(root) if node.title[:1].isdigit()]
    assert [int(node.title.split(".")[0]) for node in numbered] == list(numbers)
    assert all(len(node.title) <= 90 and leaves(node) for node in numbered)


def test_a_filings_exhibit_label_atop_a_contract_names_nothing(tmp_path):
    """A contract filed as an exhibit opens with the filing's label ("Exhibit 10.1", an address
    beside it): it names neither the document nor a section and stays its text. Exhibits the
    contract appends after its clauses ("EXHIBIT 2.1") open sections, as before."""
    parts = ["Exhibit 10.1     12 Harbour Road Leith", "SUPPLY AGREEMENT", CONVEY]
    for number, (title, body) in enumerate(CLAUSES, start=1):
        parts += [f"{number}. {title}", body]
    parts += ["EXHIBIT 2.1", AGGREGATE]
    doc = parse_file(write(tmp_path, "supply_contract.txt", "\n\n".join(parts) + "\n"))
    root, _ = structure_document(doc)
    assert doc.title == "supply_contract"
    assert [node.title for node in sections(root)] == [
        "SUPPLY AGREEMENT", *[f"{n}. {t}" for n, (t, _) in enumerate(CLAUSES, 1)], "EXHIBIT 2.1"]
    assert [leaf.text for leaf in root.children if leaf.kind == "paragraph"] == [parts[0]]
