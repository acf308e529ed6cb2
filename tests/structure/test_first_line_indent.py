"""The first-line indent of PDF paragraphs (Block.indent) and the structurer's cue built on it: in
a document that indents its paragraphs, one that starts flush left follows a heading, so a
section starts there even where the words go on with the same topic."""

from __future__ import annotations

import dataclasses

from longqa.parse import parse_file
from longqa.structure.boundaries import BoundarySettings
from longqa.structure.known_boundaries import predicted_starts, strip_headings
from longqa.structure.llm import LlmStructurer, StructureOptions
from longqa.structure.unit_cues import first_lines
from tests.fakes import OutlineGenerator
from tests.pdfgen import H, P, Row, make_pdf

INDENT = 15.0
# One topic throughout (keeping bees), so that the words alone do not tell where the heading was.
HIVE = [
    "Beekeepers open their hives on warm and still afternoons, when most of the foragers are out in "
    "the fields and the colony stays calm. They lift the frames one by one, look for eggs and young larvae, "
    "and close the box again before the brood has time to cool in the open air.",
    "A frame of healthy brood shows capped cells in a solid patch with few gaps. Scattered cells, sunken "
    "cappings or a sour smell tell the keeper that the larvae are sick, and that the colony may need "
    "treatment or a new queen before the summer is over.",
    "Each colony needs room to grow in spring. When the boxes fill with brood and honey the keeper adds "
    "another box on top, so that the workers have space to store nectar and the queen keeps laying "
    "instead of preparing the colony to swarm away.",
    "Colonies multiply by swarming, but the keeper loses half the workers and the old queen when a "
    "swarm leaves. Queen cells along the lower edge of the frames are the first sign, and splitting the "
    "colony early is the usual answer to them.",
    "The keeper takes the honey in late summer, once the cells are capped with wax and the water content "
    "has fallen low enough for the honey to keep. The keeper clears the bees from the boxes, cuts the cappings and "
    "spins the frames in an extractor.",
    "Winter stores matter more than the harvest. A colony in a cold climate needs fifteen to twenty "
    "kilograms of honey to survive until spring, and the keeper weighs the hives in autumn and feeds "
    "thick syrup to those that are too light.",
    "Of all the pests of the hive, varroa mites do the most harm in most countries. The keeper counts the mites "
    "that fall onto a board under the hive, and treats the colony in late summer when the count rises "
    "above the level the local advisers recommend.",
    "Good records make the work easier from year to year. Many keepers write down the date, the weather, "
    "the temper of the bees, the number of frames of brood and any treatment given, so that they can "
    "compare colonies and choose which ones to breed from.",
    "Through the cold months the colony forms a cluster around the queen and keeps its centre warm by "
    "shivering its flight muscles. The keeper leaves the hive closed, checks that the entrance is free of "
    "dead bees, and lifts the back of the box now and then to feel its weight.",
    "Mice look for dry nests in autumn, and a hive with a wide entrance invites them in. A metal guard "
    "with small holes lets the bees pass and keeps the mice out, and a strap around the boxes stops "
    "winter gales from tipping the hive over on its stand.",
    "Damp does more harm than cold to a wintering colony. Warm, moist air rises from the "
    "cluster and drips back from a cold roof onto the bees, so keepers give the hive some ventilation "
    "and an insulated cover above the top frames.",
    "Late in winter the queen starts to lay again and the colony uses its stores much faster than before. "
    "This is when colonies most often starve, and the keeper who finds a light hive puts a block of "
    "fondant directly above the cluster.",
]
HEADING = "Keeping bees through the winter"
WINTER = 8  # index of the paragraph after the heading


def indented_pdf(path, indent: float = INDENT):
    """Two pages of paragraphs indented as a typeset paper sets them: every first line indented but
    the first after the heading; a short table on the first page."""
    items = [P(text, indent=indent) for text in HIVE]
    items[WINTER] = P(HIVE[WINTER])
    first = [*items[:4], Row(["Hive", "Frames", "Kilograms"]), Row(["North", "9", "21"]), *items[4:6]]
    return make_pdf(path, [first, [*items[6:WINTER], H(HEADING), *items[WINTER:]]])


def test_the_parser_reports_each_paragraphs_first_line_indent(tmp_path):
    doc = parse_file(indented_pdf(tmp_path / "hive.pdf"))
    indents = {block.text.split()[0]: block.indent for block in doc.blocks if not block.table}
    for text in HIVE:
        word = text.split()[0]
        expected = 0.0 if text is HIVE[WINTER] else INDENT
        assert indents[word] is not None and abs(indents[word] - expected) < 0.5, (word, indents[word])
    assert indents["Keeping"] is None  # a one-line heading: no other line to measure against
    assert all(block.indent is None for block in doc.blocks if block.table)
    # The text is what it was without the new field: paragraphs whole, one block each.
    assert [b.text for b in doc.blocks if not b.table and b.text != HEADING] == HIVE


def section_starts(known, settings: BoundarySettings) -> list[int]:
    options = StructureOptions(titles=False, boundaries=settings)
    root = LlmStructurer(OutlineGenerator(), embedder=None, options=options)(known.doc)
    return [offset for offset, level, _ in predicted_starts(root) if level == 1]


OFF = dataclasses.replace(BoundarySettings(), indent_bonus=0.0, indent_penalty=0.0)


def test_a_flush_paragraph_after_a_removed_heading_opens_a_section(tmp_path):
    known = strip_headings(parse_file(indented_pdf(tmp_path / "hive.pdf")))
    assert known is not None and [title for _, _, title in known.truth] == [HEADING]
    where = known.truth[0][0]
    assert section_starts(known, BoundarySettings()) == [0, where]
    assert where not in section_starts(known, OFF)  # the words alone do not find it


def test_a_document_without_indents_is_left_as_it_was(tmp_path):
    known = strip_headings(parse_file(indented_pdf(tmp_path / "flat.pdf", indent=0.0)))
    assert known is not None
    assert all(block.indent in (None, 0.0) for block in known.doc.blocks)
    assert section_starts(known, BoundarySettings()) == section_starts(known, OFF)


def test_the_cue_applies_only_where_the_document_indents_its_paragraphs():
    texts = ["The first paragraph.", "A second one.", "and a cut one.", "Another.", "More."] * 2
    indented = [0.0, 12.0, 0.0, 12.0, 12.0] * 2
    marks = first_lines(indented, texts, indent_points=3.0, indented_share=0.4, least=8)
    assert marks == [1, -1, 0, -1, -1] * 2  # a unit that starts mid-sentence is never flush
    flat = [0.0, 0.0, 0.0, 0.0, 12.0] * 2  # a web page: paragraphs set apart by space
    assert first_lines(flat, texts, 3.0, 0.4, 8) == [0] * 10
    assert first_lines(indented[:5], texts[:5], 3.0, 0.4, 8) == [0] * 5  # too few to tell
    assert first_lines([None] * 10, texts, 3.0, 0.4, 8) == [0] * 10
