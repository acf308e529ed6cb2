"""The outline markup: anchors, rendering, grammar text, parsing, and mapping anchors onto text."""

from __future__ import annotations

import re

import pytest

from longqa.structure.markup import (
    SKIP, MarkupError, Part, WordIndex, anchor, clean_title, entry_words, map_entries, parse, render,
    window_grammar,
)

LONG = "Honey bees live in colonies that can hold tens of thousands of workers and one queen."


def test_anchor_keeps_k_words_each_side_and_writes_short_paragraphs_whole():
    assert anchor(LONG, 4) == "Honey bees live in <skip> workers and one queen."
    assert anchor(LONG, 2) == "Honey bees <skip> one queen."
    assert anchor("Only six words in this one.", 4) == "Only six words in this one."


def test_anchor_widens_a_side_made_of_punctuation_and_quotes_no_tags():
    text = "— — Opening words of a long paragraph that goes on and on until it stops. — —"
    first, last = entry_words(anchor(text, 2))
    assert first == ["opening"] and last == ["stops"]
    assert "<" not in anchor("a <br> tag inside " + LONG, 4).replace(SKIP, "")


def test_render_then_parse_round_trips_sections_and_subsections():
    parts = [
        Part(1, "Bees", ["a <skip> b", "c <skip> d"]),
        Part(2, "Keeping", ["e <skip> f"]),
        Part(2, "Honey", ["g <skip> h"]),
        Part(1, "Volcanoes", ["i <skip> j"]),
    ]
    text = render(parts)
    assert text.startswith("<section: Bees>\na <skip> b\n<br>\nc <skip> d\n<subsection: Keeping>")
    assert text.endswith("</section>\n<section: Volcanoes>\ni <skip> j\n</section>")
    assert parse(text) == parts


def test_render_of_a_section_that_only_holds_subsections():
    parts = [Part(1, "Outer", []), Part(2, "Inner", ["a <skip> b"])]
    assert parse(render(parts)) == parts


def test_clean_title_removes_angle_brackets_newlines_and_caps_length():
    assert clean_title("  Bees <and>\nwasps ") == "Bees and wasps"
    assert len(clean_title("x" * 200)) == 48
    assert clean_title("Royalty payments to the Project Gutenberg Literary Archive") == (
        "Royalty payments to the Project Gutenberg"
    )
    assert clean_title("  ") == "Untitled"


@pytest.mark.parametrize(
    "text, problem",
    [
        ("no tags at all", "outside any section"),
        ("<section: A>\nx <skip> y", "unclosed"),
        ("<section: A>\nx\n</section>\n</section>", "no open section"),
        ("<subsection: A>\nx\n</subsection>", "outside a section"),
        ("<section: A>\n<section: B>\nx\n</section>", "inside an open section"),
        ("<section: A>\nx <skip> y <skip> z\n</section>", "more than one"),
        ("<section: A>\n</section>", "no paragraphs"),
        ("<section: A>\n<subsection: B>\nx\n</section>", "before its subsection closed"),
    ],
)
def test_parse_rejects_malformed_markup(text, problem):
    with pytest.raises(MarkupError, match=problem):
        parse(text)


def test_window_grammar_fixes_the_anchors_and_escapes_them():
    anchors = ['He said "stop" <skip> back\\slash', "short one", "third <skip> end"]
    grammar = window_grammar(anchors, subsections=False)
    rules = dict(line.split(" ::= ", 1) for line in grammar.strip().splitlines())
    assert rules["s0"] == '"He said \\"stop\\" <skip> back\\\\slash" gs1'
    assert rules["s2"] == '"third <skip> end" gs3'
    assert rules["gs3"] == '"\\n</section>"'
    assert '"\\n<br>\\n" s1' in rules["gs1"] and "<section: " in rules["gs1"]
    assert "subsection" not in grammar
    with_subs = dict(line.split(" ::= ", 1) for line in window_grammar(anchors).strip().splitlines())
    assert {"open0", "u0", "gu1", "gu3"} <= set(with_subs)
    assert with_subs["gu3"] == '"\\n</subsection>\\n</section>"'


def test_window_grammar_accepts_what_render_writes():
    """Turn the GBNF into a regular expression (it has no recursion) and match render's output."""
    anchors = ["a <skip> b", "c <skip> d", "e"]
    grammar = window_grammar(anchors)
    rules = dict(line.split(" ::= ", 1) for line in grammar.strip().splitlines())

    def to_regex(name: str, depth: int = 0) -> str:
        body = rules[name]
        out = []
        for token in re.findall(r'"(?:\\.|[^"\\])*"|\[[^\]]*\]\{[^}]*\}|\[[^\]]*\]|\||\w+', body):
            if token == "|":
                out.append("|")
            elif token.startswith('"'):
                out.append(re.escape(token[1:-1].encode().decode("unicode_escape")))
            elif token.startswith("["):
                out.append(token.replace("\\n", "\n"))
            else:
                out.append(to_regex(token, depth + 1))
        return "(?:" + "".join(out) + ")"

    pattern = re.compile(to_regex("root"), re.S)
    for parts in (
        [Part(1, "One", anchors)],
        [Part(1, "One", anchors[:1]), Part(1, "Two", anchors[1:])],
        [Part(1, "One", anchors[:1]), Part(2, "Sub", anchors[1:2]), Part(1, "Three", anchors[2:])],
        [Part(1, "One", []), Part(2, "Sub", anchors[:2]), Part(2, "Sub two", anchors[2:])],
    ):
        assert pattern.fullmatch(render(parts)), render(parts)
    assert not pattern.fullmatch(render([Part(1, "One", [anchors[0], anchors[2]])]))


BODY = (
    "Alpha  beta GAMMA delta, one two three four.\n\n"
    "Repeat this line exactly.\n\n"
    "Repeat this line exactly.\n\n"
    "Last paragraph starts here and it ends here."
)


def _bounds(body: str) -> tuple[WordIndex, set[int], set[int]]:
    index = WordIndex.of(body)
    starts, ends, cursor = set(), set(), 0
    for para in body.split("\n\n"):
        n = len([w for w in para.split() if re.sub(r"[\W_]+", "", w)])
        starts.add(cursor)
        cursor += n
        ends.add(cursor)
    return index, starts, ends


def test_map_entries_is_tolerant_of_case_spacing_and_punctuation():
    index, starts, ends = _bounds(BODY)
    ranges = map_entries(["alpha beta gamma <skip> THREE four"], index, starts, ends, 0)
    assert ranges == [(0, 8)]
    a, b = index.spans[0][0], index.spans[7][1]
    assert BODY[a:b] == "Alpha  beta GAMMA delta, one two three four."


def test_map_entries_searches_forward_so_repeated_paragraphs_map_in_order():
    index, starts, ends = _bounds(BODY)
    entries = ["Alpha beta <skip> three four.", "Repeat this line exactly.", "Repeat this line exactly.",
               "Last paragraph starts <skip> it ends here."]
    assert map_entries(entries, index, starts, ends, 0) == [(0, 8), (8, 12), (12, 16), (16, 24)]


def test_map_entries_raises_when_an_anchor_is_missing_or_off_a_boundary():
    index, starts, ends = _bounds(BODY)
    with pytest.raises(MarkupError, match="anchor not found"):
        map_entries(["Zebra crossing <skip> here."], index, starts, ends, 0)
    with pytest.raises(MarkupError, match="anchor not found"):
        map_entries(["beta gamma <skip> three four."], index, starts, ends, 0)  # not a paragraph start
    with pytest.raises(MarkupError, match="closing anchor"):
        map_entries(["Alpha beta <skip> two three"], index, starts, ends, 0)  # not a paragraph end
    with pytest.raises(MarkupError, match="does not end at a boundary"):
        map_entries(["Repeat this line"], index, starts, ends, 8)
    with pytest.raises(MarkupError, match="anchor not found"):  # already consumed: no going back
        map_entries(["Alpha beta <skip> three four."], index, starts, ends, 8)
