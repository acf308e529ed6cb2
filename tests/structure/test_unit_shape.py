"""Unit shapes (prose, table, small print, list, formula) read from real PDFs, and what boundary
choice does with them: tables, captions and formulas open no section, nothing starts inside a
reference list, and a long list or table run after prose does open one."""

from __future__ import annotations

import numpy as np
import pytest

from longqa.parse import parse_file
from longqa.structure.boundaries import BoundarySettings, gap_scores, section_plan
from longqa.structure.llm import LlmStructurer, StructureOptions
from longqa.structure.paragraph_units import paragraph_units
from longqa.structure.unit_shape import FORMULA, LIST, PROSE, SMALL, TABLE, unit_layout, unit_shape, unit_shapes
from tests.fakes import OutlineGenerator
from tests.pdfgen import BODY, P, Row, make_pdf

BEES = [
    "Honey bees live in colonies that hold tens of thousands of workers, a few hundred drones and one queen. "
    "The queen lays every egg, sometimes more than a thousand in a summer day, while the workers clean cells, "
    "feed the larvae, build wax comb and guard the entrance of the hive against wasps and robbing bees.",
    "Foraging bees collect nectar and pollen from flowers within a few kilometres of the hive. A forager that "
    "found a good patch performs a waggle dance on the comb, and the angle and length of the dance tell her "
    "sisters the direction and the distance of the flowers, so that the colony sends its workers where it pays.",
    "Beekeepers keep their colonies in wooden boxes with removable frames, so that they can inspect the brood "
    "and take the surplus honey without harming the nest. They watch for swarms in spring, treat the hives "
    "against varroa mites and leave enough stores in autumn for the bees to survive the cold months.",
    "A strong colony can bring in twenty kilograms of honey in a good year. The bees also pollinate the orchards "
    "and fields around the apiary, and many farmers pay beekeepers to move hives into their almond or apple "
    "trees while the blossom is open, which earns the keeper more than the honey itself in some regions.",
]
VOLCANOES = [
    "A volcano forms where molten rock from deep inside the Earth reaches the surface. Most volcanoes sit along "
    "the edges of tectonic plates, where one plate sinks beneath another or two plates pull apart, but some grow "
    "above hot spots in the middle of a plate, as the islands of Hawaii did over millions of years.",
    "Eruptions range from quiet lava flows to violent explosions. When the magma is thick and holds a lot of "
    "gas, pressure builds until the rock shatters into ash and pumice that can rise tens of kilometres into the "
    "sky and fall on towns far downwind, closing airports and ruining crops for a season.",
    "Volcanologists watch restless volcanoes with seismometers, tiltmeters and gas sensors. A swarm of small "
    "earthquakes, a swelling flank or a jump in sulphur dioxide can mean that magma is rising, and warnings based "
    "on such signs have saved thousands of lives in the past fifty years of careful monitoring.",
]
CAPTION = ("Figure 2: Workers on a frame of capped brood in late spring; the darker cells at the top hold "
           "pollen stored for the larvae, and the lighter cells at the bottom hold nectar still drying.")
REFERENCES = [
    f'{i}. Author{i}, Anne (March {i}, 2019). "Report number {i} on the state of the field" '
    f"(https://example.org/archive/report-{i}.html). Example Journal. Archived from the original "
    f"(https://example.org/report-{i}) on 2019-03-{i:02d}. Retrieved April {i}, 2020."
    for i in range(1, 13)
]


def shapes_of(path):
    doc = parse_file(path)
    body, units, _ = paragraph_units(doc, 40, 300)
    texts = [body[u.start : u.end] for u in units]
    return texts, units, unit_shapes(texts, unit_layout(doc, [(u.start, u.end) for u in units]))


def test_shapes_read_from_a_real_pdf(tmp_path):
    """Body paragraphs are prose; a caption in smaller print is small; table rows are a table; a
    list of references with links, "Retrieved" and numbered entries is a list."""
    rows = [Row(["Apiary", "Hives", "Honey (kg)"])] + [Row([f"Site {i}", str(10 + i), str(200 + 17 * i)]) for i in range(8)]
    path = make_pdf(tmp_path / "bees.pdf", [
        [P(BEES[0]), P(BEES[1]), P(CAPTION, size=BODY - 2), *rows, P(BEES[2])],
        [P(text) for text in REFERENCES[:6]],
    ])
    texts, _, shapes = shapes_of(path)
    found = {shape: [t for t, s in zip(texts, shapes) if s == shape] for shape in (PROSE, SMALL, TABLE, LIST)}
    assert [t.split()[0] for t in found[PROSE]] == ["Honey", "Foraging", "Beekeepers"]
    assert len(found[SMALL]) == 1 and found[SMALL][0].startswith("Figure 2:")
    assert found[TABLE] and all(" | " in t for t in found[TABLE]) and "Site 3" in " ".join(found[TABLE])
    assert found[LIST] and all(t.lstrip()[0].isdigit() for t in found[LIST])


def test_shapes_from_the_words_alone():
    assert unit_shape(BEES[0]) == PROSE
    assert unit_shape("L = − Σ t=1 T log pθ(wt | w<t, x) + λ ‖θ‖² (3)") == FORMULA
    assert unit_shape(" ".join(REFERENCES[:3])) == LIST
    assert unit_shape("Jones cited two studies (Smith, 2019; https://example.org) in her account of the war, "
                      "which ran to many pages and covered every year of the conflict in turn.") == PROSE
    assert unit_shape(BEES[0], size=8.0, body_size=10.0) == SMALL
    assert unit_shape(BEES[0], size=10.0, table_share=0.8, body_size=10.0) == TABLE
    # A reference without a link, between two that have them, belongs to the list.
    plain = 'Green, Paul (2011). "Jennifer Jones: The Life and Films". McFarland. p. 53. ISBN 978-0-7864-5882-1.'
    assert unit_shapes([REFERENCES[0], plain, REFERENCES[1]]) == [LIST] * 3
    assert unit_shapes([BEES[0], plain, BEES[1]]) == [PROSE] * 3


def test_a_table_between_paragraphs_of_one_topic_opens_no_section():
    """The table measures unrelated to the prose around it; without shapes it is cut out as a
    section of its own, with shapes the topic signals pass over it."""
    texts = [*BEES[:3], "Site | Hives | Honey 1 | 12 | 200 2 | 14 | 230 3 | 9 | 180", BEES[3], *VOLCANOES]
    shapes = [PROSE, PROSE, PROSE, TABLE, PROSE, PROSE, PROSE, PROSE]
    bee, volcano, table = [1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]
    vectors = np.array([bee, bee, bee, table, bee, volcano, volcano, volcano], dtype=np.float32)
    settings = BoundarySettings()
    tokens = [80] * len(texts)
    blind = section_plan(gap_scores(vectors, texts, settings), tokens, settings)
    assert {3, 4} & {u for u, _ in blind}  # the table stands out as unrelated text
    seen = section_plan(gap_scores(vectors, texts, settings, shapes=shapes), tokens, settings)
    assert seen == [(0, 1), (5, 1)]
    off = section_plan(gap_scores(vectors, texts, BoundarySettings(read_shapes=False), shapes=shapes), tokens, settings)
    assert off == blind


def test_a_passed_over_run_that_begins_mid_sentence_moves_the_start_after_it():
    """A footnote in small print that ends a paragraph cut by a page break: the topic changes
    across it, and the section starts after it, not at its first (mid-sentence) unit."""
    footnote = ("of the hive, as the older studies had it. 1 Counts made by the county beekeeping society "
                "between 1990 and 2010, published in its yearly bulletin.")
    texts = [BEES[0], BEES[1], footnote, VOLCANOES[0], VOLCANOES[1]]
    bee, volcano = [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]
    vectors = np.array([bee, bee, [0.0, 0.0, 1.0], volcano, volcano], dtype=np.float32)
    settings = BoundarySettings()
    gaps = gap_scores(vectors, texts, settings, shapes=[PROSE, PROSE, SMALL, PROSE, PROSE])
    assert gaps.continuation.tolist() == [False, True, False, False]
    assert section_plan(gaps, [90] * 5, settings) == [(0, 1), (3, 1)]


def test_nothing_starts_inside_a_long_reference_list_and_its_start_is_a_section():
    texts = [*BEES, *REFERENCES[:8]]
    shapes = unit_shapes(texts)
    assert shapes == [PROSE] * 4 + [LIST] * 8
    rng = np.random.default_rng(7)
    vectors = np.vstack([np.tile([1.0, 0, 0, 0], (4, 1)), rng.normal(size=(8, 4))]).astype(np.float32)
    settings = BoundarySettings()
    tokens = [90] * 4 + [60] * 8  # a list run of 480 tokens: longer than display_run_tokens
    gaps = gap_scores(vectors, texts, settings, shapes=shapes)
    assert np.isneginf(gaps.score[4:]).all()  # gaps inside the list
    assert [u for u, _ in section_plan(gaps, tokens, settings)] == [0, 4]
    # Without shapes, the list's unrelated neighbours cut it to pieces.
    blind = section_plan(gap_scores(vectors, texts, settings), tokens, settings)
    assert len([u for u, _ in blind if u > 4]) >= 2


@pytest.mark.models
def test_real_embedder_keeps_a_table_and_references_from_opening_sections(tmp_path):
    """A PDF of bee paragraphs with a table and a caption among them, volcano paragraphs, then a
    reference list: sections open at the volcanoes and at the references, and nowhere else."""
    from longqa.models.resolve import load_embedder

    rows = [Row(["Apiary", "Hives", "Honey (kg)"])] + [Row([f"Site {i}", str(10 + i), str(200 + 17 * i)]) for i in range(8)]
    path = make_pdf(tmp_path / "report.pdf", [
        [P(BEES[0]), P(BEES[1]), *rows, P(CAPTION, size=BODY - 2), P(BEES[2])],
        [P(BEES[3]), *(P(text) for text in VOLCANOES)],
        [P(text) for text in REFERENCES[:7]],
        [P(text) for text in REFERENCES[7:]],
    ])
    doc = parse_file(path)
    structurer = LlmStructurer(OutlineGenerator(), embedder=load_embedder(), options=StructureOptions(titles=False))
    root = structurer(doc)
    assert root is not None, structurer.report.reason
    firsts = [s.children[0].text.split()[0] if s.children[0].kind == "paragraph" else s.children[0].children[0].text.split()[0]
              for s in root.children]
    assert firsts == ["Honey", "A", "1."], firsts
    assert all(child.kind == "paragraph" for child in root.children[2].children)  # the list is not cut
