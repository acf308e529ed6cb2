"""RDR2's router (longqa/ask/router.py): the serialised subtree, the one-move grammar and its
parse, on a real store of the generated handbook; and the real default model under that grammar."""

import re

import pytest

from longqa import tokens
from longqa.ask.search import router
from longqa.store.nodes import load_tree
from longqa.structure.tree import walk
from tests.ask_support import build_store, reactor_handbook


@pytest.fixture
def handbook(tmp_path, db_path):
    db = build_store(db_path, {"handbook.md": reactor_handbook()}, tmp_path)
    root = load_tree(db, 1)
    nodes, parent_of, order = {}, {}, {}
    for i, node in enumerate(walk(root)):
        nodes[node.id], order[node.id] = node, i
        for child in node.children:
            parent_of[child.id] = node
    return root, nodes, parent_of, order


def leaf_with(nodes, words):
    return next(n for n in nodes.values() if n.is_leaf and words in n.text)


def test_subtree_shows_headings_and_collapses_content_not_opened(handbook):
    root, nodes, parent_of, order = handbook
    opened = leaf_with(nodes, "Fuel assemblies are replaced")
    hidden = leaf_with(nodes, "The emergency diesel generators")
    tree, kept = router.render([opened.id, hidden.id], {opened.id}, nodes, parent_of, order,
                               max_tokens=600, hidden_words=6, open_words=200)
    assert kept == [opened.id, hidden.id]
    lines = tree.split("\n")
    # each node with its ancestors, in document order, one indent unit per level of depth
    assert lines[0] == f"{root.id}: {root.title}"
    for line in lines:
        node = nodes[int(re.match(r"\s*(\d+):", line).group(1))]
        assert line.startswith("  " * node.depth + f"{node.id}: ")
    titles = [nodes[int(re.match(r"\s*(\d+):", line).group(1))].title for line in lines]
    assert titles[1:3] == ["Fuel Handling", "Fuel Handling Details"]
    assert "Emergency Procedures" in titles and "Cooling System" not in titles  # only the ancestors
    # the opened leaf is read in full; the other is its first words and "…"
    assert "Fuel assemblies are replaced every 18 months" in tree
    hidden_line = next(line for line in lines if line.strip().startswith(f"{hidden.id}:"))
    assert hidden_line.endswith("…") and len(hidden_line.split(": ", 1)[1].split()) == 6
    assert "emergency diesel generators" not in tree


def test_subtree_is_cut_to_the_token_cap_in_priority_order(handbook):
    root, nodes, parent_of, order = handbook
    leaves = [n for n in walk(root) if n.is_leaf]
    wanted = [leaves[-1].id] + [leaf.id for leaf in leaves[:-1]]  # the last leaf first
    tree, kept = router.render(wanted, set(), nodes, parent_of, order, max_tokens=60, hidden_words=5, open_words=40)
    assert kept[0] == leaves[-1].id and 1 < len(kept) < len(wanted)
    assert sum(tokens.count(line) + 1 for line in tree.split("\n")) <= 60
    assert all(f"{i}: " in tree for i in kept)


def test_grammar_lists_only_the_legal_ids():
    text = router.grammar([31, 7], [7, 12], max_answer=2)
    rules = dict(line.split(" ::= ", 1) for line in text.strip().split("\n"))
    assert set(re.findall(r'"(\d+)"', rules["aid"])) == {"31", "7"}
    assert set(re.findall(r'"(\d+)"', rules["eid"])) == {"7", "12"}
    assert rules["root"].count("aid") == 2  # ANSWER lists at most max_answer ids
    assert router.grammar([], [], 3) == 'root ::= " REFUSE"\n'
    assert "REFUSE" not in router.grammar([], [5], 3, refuse=False)


def test_parse_reads_legal_moves_and_drops_junk():
    legal_answer, legal_expand = [3, 12], [12, 15]
    assert router.parse(" EXPAND(12)", legal_answer, legal_expand) == router.Action("EXPAND", (12,), " EXPAND(12)")
    assert router.parse(" ANSWER(3, 99, 12)", legal_answer, legal_expand).ids == (3, 12)
    assert router.parse("[EXPAND] 15: the heading", legal_answer, legal_expand).ids == (15,)  # RDR2's form
    assert router.parse("refuse", legal_answer, legal_expand).kind == "REFUSE"
    for junk in ("", "I would read more", "EXPAND(3)", "ANSWER()", "EXPAND 99"):
        assert router.parse(junk, legal_answer, legal_expand).kind == "none"


def test_steering_follows_the_mode_and_the_measured_skill():
    from tests.ask_support import FakeGenerator

    gemma = FakeGenerator()
    gemma.name = "gemma-3-270m-q4_k_m"
    assert router.steering("off", FakeGenerator()) == 0.0
    assert router.steering("on", gemma) == 1.0
    assert router.steering("auto", gemma) == 0.0  # measured at chance
    assert router.steering("auto", FakeGenerator()) == 1.0  # never measured: steers fully
    assert router.steering("on", None) == 0.0
    with pytest.raises(ValueError):
        router.steering("sometimes", gemma)


@pytest.mark.models
def test_default_model_makes_a_legal_move_under_the_grammar(handbook):
    from longqa.models.resolve import load_generator

    root, nodes, parent_of, order = handbook
    generator = load_generator()
    frontier = [leaf_with(nodes, "Fuel assemblies are replaced").id, leaf_with(nodes, "simulator training").id]
    section = next(n for n in nodes.values() if n.title == "Cooling System")
    shown = frontier + [section.id]
    tree, kept = router.render(shown, set(), nodes, parent_of, order, 600, 10, 40)
    assert kept == shown
    question = "How often are fuel assemblies replaced?"
    move = router.decide(generator, question, tree, kept, kept, max_answer=2)
    assert move.kind in ("ANSWER", "EXPAND", "REFUSE") and set(move.ids) <= set(kept)
    # with a single legal move and id, the grammar leaves the model no other reply
    only = router.decide(generator, question, tree, [], [section.id], max_answer=2, refuse=False)
    assert only == router.Action("EXPAND", (section.id,), f" EXPAND({section.id})")
