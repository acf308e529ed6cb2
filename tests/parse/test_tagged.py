"""Text marked up with HTML tags: `.html` files and web pages saved as text (tagged.py)."""

from pathlib import Path

from longqa.parse import parse_file
from longqa.structure.tree import leaves, sections
from longqa.structure.tree_source import structure_document
from tests.command import run_json

PAGE = """<!DOCTYPE html><html><head><title>Kestrel Valley &amp; Works</title>
<style>p { color: red }</style><script>var x = "<p>not text</p>";</script></head>
<body><h1>Kestrel Valley Works</h1>
<p>The works treats water for <b>forty</b> thousand homes.</p>
<!-- <p>a comment, never text</p> -->
<h2>Filters</h2><p>Each filter is backwashed every 36 hours.</p>
<table><tr><th>Filter</th><th>Area</th></tr><tr><td>F1</td><td>40 m&sup2;</td></tr></table>
<h3>Media</h3><ul><li>Sand, 0.6 m deep</li><li>Anthracite, 0.3 m deep</li></ul>
<h2>Pumps</h2><p>Three pumps lift the water to the reservoir.</p>
</body></html>"""

# The shape of a Wikipedia page saved as text with its tags, all on one line.
DUMP = ("Brass band - wikipedia <H1> Brass band </H1> <Table> <Tr> <Th_colspan=\"2\"> Brass band </Th> </Tr> "
        "<Tr> <Th> Origin </Th> <Td> England </Td> </Tr> </Table> <P> A brass band is a musical ensemble "
        "of brass instruments and percussion . </P> <H2> Contents </H2> <Ul> <Li> 1 History </Li> "
        "<Li> 2 Instruments </Li> </Ul> <H2> History ( edit ) </H2> <P> The first brass bands formed in "
        "the 1830s in the north of England . </P> <H3> Contests ( edit ) </H3> <P> The national contest "
        "began in 1860 at the Crystal Palace . </P> <H2> Instruments ( edit ) </H2> <P> A band has about "
        "28 players : cornets , horns , baritones , euphoniums , trombones and tubas . </P>")


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_html_file_blocks_headings_table_and_no_tags(tmp_path):
    doc = parse_file(write(tmp_path, "works.html", PAGE))
    assert doc.format == "html" and doc.title == "Kestrel Valley & Works"
    texts = [b.text for b in doc.blocks]
    assert "The works treats water for forty thousand homes." in texts  # inline <b> joined as written
    assert [(b.heading, b.text) for b in doc.blocks if b.heading] == [
        (1, "Kestrel Valley Works"), (2, "Filters"), (3, "Media"), (2, "Pumps")]
    table = [b for b in doc.blocks if b.table]
    assert len(table) == 1 and table[0].text == "Filter | Area\nF1 | 40 m²"
    assert "Sand, 0.6 m deep" in texts and "Anthracite, 0.3 m deep" in texts
    joined = "\n".join(texts)
    assert "<" not in joined and "not text" not in joined and "comment" not in joined and "color" not in joined
    root, source = structure_document(doc)
    assert source == "html"
    assert [s.title for s in sections(root)] == ["Filters", "Media", "Pumps"]


def test_one_line_text_dump_is_read_by_its_tags(tmp_path):
    doc = parse_file(write(tmp_path, "brass_band.txt", DUMP))
    assert doc.format == "html" and doc.title == "Brass band"
    root, source = structure_document(doc)
    assert source == "html"
    top = [n.title for n in root.children if n.kind == "section"]
    assert top == ["Contents", "History ( edit )", "Instruments ( edit )"]
    contests = [s for s in sections(root) if s.title == "Contests ( edit )"]
    assert contests and contests[0].depth == 2
    assert any(leaf.text == "The national contest began in 1860 at the Crystal Palace ." for leaf in leaves(contests[0]))
    assert all("<" not in leaf.text for leaf in leaves(root))
    assert any("\nBrass band\nOrigin | England\n" in leaf.text for leaf in leaves(root))  # <Th_colspan="2"> is a th


def test_a_layout_table_is_read_as_the_blocks_inside_it(tmp_path):
    # A script site: the whole page sits in a table, the script in a <pre> in one of its cells.
    script = "INT. NEST - DAY\n\nCODY climbs onto the eagle's back.\nCODY\n  Hold on!\n\nThey soar over the cliff."
    page = ("<html><body><table><tr><td><a href='/'>Script Database</a></td></tr>"
            "<tr><td><table><tr><td>Genre</td><td>Action</td></tr><tr><td>Year</td><td>1990</td></tr></table></td>"
            f"<td><h1>Rescuers Down Under</h1><pre>{script}</pre></td></tr></table></body></html>")
    doc = parse_file(write(tmp_path, "script.html", page))
    texts = [b.text for b in doc.blocks]
    assert "INT. NEST - DAY" in texts and "They soar over the cliff." in texts
    assert "CODY climbs onto the eagle's back.\nCODY\n  Hold on!" in texts  # the script's lines kept
    assert [b.text for b in doc.blocks if b.table] == ["Genre | Action\nYear | 1990"]  # a data table inside stays one
    assert [(b.heading, b.text) for b in doc.blocks if b.heading] == [(1, "Rescuers Down Under")]


def test_prose_with_a_stray_tag_stays_plain_text(tmp_path):
    text = "Use the <p> element for paragraphs.\n\nWhen x < 3 and y > 2 the rule holds.\n"
    doc = parse_file(write(tmp_path, "note.txt", text))
    assert doc.format == "text"
    assert [b.text for b in doc.blocks] == ["Use the <p> element for paragraphs.", "When x < 3 and y > 2 the rule holds."]


def test_ingest_and_inspect_an_html_file(tmp_path, db_path):
    path = write(tmp_path, "works.html", PAGE)
    result, out = run_json("ingest", path, db=db_path)
    assert result.returncode == 0 and out["documents"][0]["structure"] == "html"
    _, tree = run_json("inspect", "tree", "works.html", db=db_path)
    assert [c["title"] for c in tree["children"] if c["kind"] == "section"] == ["Filters", "Pumps"]
    other, out = run_json("ingest", write(tmp_path, "notes.xhtml", PAGE), db=db_path)  # read by its tags
    assert other.returncode == 0 and out["documents"][0]["structure"] == "html"
