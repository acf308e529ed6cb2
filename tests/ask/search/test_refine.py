"""Tree refinement: LS/GS propagation, budgeted greedy selection, closure rules, passages."""

import pytest

from longqa import tokens
from longqa.ask.context import build_passages, render
from longqa.ask.search.refine import (announces_next, leaf_tokens, score_trees, select, select_flat, starts_mid_sentence,
                               stops_mid_sentence)
from longqa.ingest import Ingestor
from longqa.store import open_db
from longqa.store.documents import document_labels
from longqa.store.nodes import load_tree
from longqa.structure.tree import Node, walk
from tests.ask_support import build_store
from tests.fakes import FakeEmbedder
from tests.pdfgen import H, P, make_pdf


def make_tree() -> Node:
    """doc(1) → A(2)[a1(3) a2(4) a3(5)], B(6)[B1(7)[b1(8) b2(9)], b3(10)] with distinct texts."""
    def leaf(i, words):
        return Node(kind="paragraph", text=" ".join(f"w{i}x{j}" for j in range(words)), id=i, doc_id=1)

    a = Node(kind="section", title="Alpha", id=2, doc_id=1, children=[leaf(3, 20), leaf(4, 30), leaf(5, 25)])
    b1 = Node(kind="subsection", title="Beta One", id=7, doc_id=1, children=[leaf(8, 15), leaf(9, 40)])
    b = Node(kind="section", title="Beta", id=6, doc_id=1, children=[b1, leaf(10, 35)])
    root = Node(kind="document", title="Doc", id=1, doc_id=1, children=[a, b])
    for order, node in enumerate(walk(root)):
        node.ord = order
    a.path, b.path, b1.path = "Doc", "Doc", "Doc > Beta"
    for leaf_node in a.children:
        leaf_node.path = "Doc > Alpha"
    b1.children[0].path = b1.children[1].path = "Doc > Beta > Beta One"
    b.children[1].path = "Doc > Beta"
    return root


def ids(nodes):
    return [n.id for n in nodes]


def test_local_score_is_mean_of_children_and_global_is_split():
    root = make_tree()
    scored = score_trees([root], {3: 0.9, 4: 0.3, 8: 0.6}, {6: 1.0}, scope=0.5)
    assert scored[2].local == pytest.approx((0.9 + 0.3 + 0.0) / 3)
    assert scored[7].local == pytest.approx(0.3)
    assert scored[6].local == pytest.approx((0.3 + 0.0) / 2)
    assert scored[1].local == pytest.approx((scored[2].local + scored[6].local) / 2)
    assert scored[6].global_ == 1.0 and scored[7].global_ == 0.5 and scored[10].global_ == 0.5
    assert scored[8].global_ == 0.25 and scored[3].global_ == 0.0
    assert scored[8].score == pytest.approx(0.6 + 0.5 * 0.25)


def test_budget_is_respected_exactly():
    root = make_tree()
    scores = score_trees([root], {3: 0.9, 4: 0.8, 5: 0.1}, {}, scope=0.0)
    cost3 = leaf_tokens(root.children[0].children[0])
    assert select([root], scores, cost3).leaf_ids == {3}
    assert select([root], scores, cost3 - 1).leaf_ids == set()
    for budget in (1, 30, 60, 99, 150, 400):
        selection = select([root], score_trees([root], {3: 0.9, 4: 0.8, 9: 0.5, 10: 0.4}, {}, 0.0), budget)
        assert selection.used <= budget
        assert selection.used == sum(leaf_tokens(n) for n in walk(root) if n.id in selection.leaf_ids)


def test_selected_parent_brings_all_children():
    root = make_tree()
    scores = score_trees([root], {9: 0.2}, {7: 1.0}, scope=1.0)  # the outline chose "Beta One"
    beta_one = root.children[1].children[0]
    selection = select([root], scores, sum(leaf_tokens(n) for n in beta_one.children))
    assert 7 in ids(selection.nodes)
    assert {8, 9} <= selection.leaf_ids


def test_all_children_selected_brings_parent():
    root = make_tree()
    scores = score_trees([root], {3: 0.9, 4: 0.8, 5: 0.7}, {}, scope=0.0)
    budget = sum(leaf_tokens(n) for n in root.children[0].children)
    selection = select([root], scores, budget)
    assert ids(selection.nodes) == [2]  # the section, not its three leaves
    assert selection.leaf_ids == {3, 4, 5}


def test_output_in_document_order_not_score_order():
    root = make_tree()
    by_id = {n.id: n for n in walk(root)}
    scores = score_trees([root], {10: 0.9, 3: 0.5}, {}, scope=0.0)
    selection = select([root], scores, leaf_tokens(by_id[3]) + leaf_tokens(by_id[10]))
    assert ids(selection.nodes) == [3, 10]  # 10 scored higher and was picked first


def test_flat_selection_ignores_the_tree():
    root = make_tree()
    leaves = [n for n in walk(root) if n.is_leaf]
    selection = select_flat(leaves, {3: 0.9, 4: 0.8, 5: 0.7}, 10_000)
    assert ids(selection.nodes) == [3, 4, 5]


def test_passages_carry_section_paths_pages_and_fit_budget(tmp_path, db_path):
    text = "# Field Guide\n\n## Birds\n\n### Owls\n\n" + "Owls hunt at night over open fields. " * 20 + \
        "\n\n### Herons\n\n" + "Herons wade in shallow water for fish. " * 20 + \
        "\n\n## Trees\n\n" + "Oaks grow slowly and live for centuries. " * 20 + "\n"
    db = build_store(db_path, {"guide.md": text}, tmp_path)
    root = load_tree(db, 1)
    leaves = {n.text.split()[0]: n for n in walk(root) if n.is_leaf}
    documents = document_labels(db)
    scores = score_trees([root], {leaves["Herons"].id: 0.9, leaves["Oaks"].id: 0.5}, {}, 0.0)
    budget = leaf_tokens(leaves["Herons"]) + leaf_tokens(leaves["Oaks"])
    selection = select([root], scores, budget)
    passages = build_passages(selection, documents, budget)
    assert [p.section for p in passages] == ["Birds > Herons", "Trees"]
    assert [p.n for p in passages] == [1, 2]
    assert all(p.page_start == 1 for p in passages)
    assert sum(p.tokens for p in passages) <= budget
    assert passages[0].tokens == tokens.count(passages[0].text)
    # The document's title once, above its passages; each passage under its section path and pages.
    shown = render(passages)
    assert shown.startswith("# Field Guide\n\n[1] Birds > Herons (p. 1)\nHerons wade")
    assert "\n\n[2] Trees (p. 1)\nOaks grow" in shown and shown.count("Field Guide") == 1


def _cut_store(tmp_path, db_path):
    """A real PDF store whose long paragraph of lines is split into leaves between two words of a
    sentence, as leaf-size splits and infoboxes cut PDFs: three leaves, the last one short."""
    lines = "\n".join(f"the justices of the court heard case number {i} in the spring sitting and" for i in range(40))
    path = make_pdf(tmp_path / "court.pdf", [[H("Supreme Court"), P(lines)]])
    db = open_db(db_path)
    assert Ingestor(db=db, embedder=FakeEmbedder()).ingest(path).status == "added"
    root = load_tree(db, 1)
    leaves = [n for n in walk(root) if n.is_leaf]
    assert len(leaves) == 3 and all(stops_mid_sentence(n.text) for n in leaves)
    assert starts_mid_sentence(leaves[2].text) and leaf_tokens(leaves[2]) < 120 < leaf_tokens(leaves[1])
    return root, leaves


def test_a_leaf_cut_mid_sentence_brings_the_next_leaf(tmp_path, db_path):
    root, (first, middle, last) = _cut_store(tmp_path, db_path)
    scores = score_trees([root], {middle.id: 0.9, first.id: 0.5}, {}, 0.0)
    budget = leaf_tokens(middle) + leaf_tokens(last)
    assert select([root], scores, budget).leaf_ids == {middle.id, last.id}
    # off: the rest of the budget goes to the next best leaf, the end of the sentence is left out
    both = leaf_tokens(middle) + leaf_tokens(first)
    assert select([root], scores, both, continuation=0).leaf_ids == {middle.id, first.id}
    assert select([root], scores, both).leaf_ids == {middle.id, last.id}  # the sentence's end comes first
    assert select([root], scores, budget, continuation=0).leaf_ids == {middle.id}
    # a continuation over the cap is not taken (the leaf before `middle` is 289 tokens)
    assert select([root], scores, budget, continuation=leaf_tokens(last) - 1).leaf_ids == {middle.id}


def test_a_leaf_opening_mid_sentence_brings_the_leaf_before(tmp_path, db_path):
    root, (first, middle, last) = _cut_store(tmp_path, db_path)
    scores = score_trees([root], {last.id: 0.9}, {}, 0.0)
    budget = leaf_tokens(middle) + leaf_tokens(last)
    assert select([root], scores, budget).leaf_ids == {last.id}  # 285 tokens: over the default cap
    assert select([root], scores, budget, continuation=300).leaf_ids == {middle.id, last.id}


def test_a_caption_brings_its_table_from_the_same_page(tmp_path, db_path):
    # A filing's statement caption ends on its units line; chosen alone it answers nothing (MGM's
    # "SUPPLEMENTAL DATA - ADJUSTED PROPERTY EBITDAR (In thousands)" without the EBITDAR rows).
    regions = ["Las Vegas Strip Resorts", "Regional Operations", "MGM China", "Management and other"]
    rows = [P(" ".join(f"{region} Adjusted Property EBITDAR quarter {k} | {877052 + 1000 * k + j} | {698739 + j} |"
                       for j, region in enumerate(regions * 3 + regions[:1]))) for k in range(3)]
    caption = "MGM RESORTS INTERNATIONAL SUPPLEMENTAL DATA - ADJUSTED PROPERTY EBITDAR (In thousands) (Unaudited)"
    path = make_pdf(tmp_path / "mgm.pdf", [[H("Results"), P("Net revenues rose in the year. " * 30)],
                                          [P(caption), *rows],
                                          [P("Liquidity remained strong through the year. " * 30)]])
    db = open_db(db_path)
    assert Ingestor(db=db, embedder=FakeEmbedder()).ingest(path).status == "added"
    root = load_tree(db, 1)
    leaves = [n for n in walk(root) if n.is_leaf]
    title, table, later = leaves[1], leaves[2:5], leaves[5]
    assert announces_next(title.text) and [n.page_start for n in table] == [2, 2, 2] and later.page_start == 3
    scores = score_trees([root], {title.id: 0.9, later.id: 0.5}, {}, 0.0)
    budget = leaf_tokens(title) + leaf_tokens(table[0])
    assert select([root], scores, budget).leaf_ids == {title.id, table[0].id}
    assert select([root], scores, budget, caption=0).leaf_ids == {title.id, later.id}  # off: the caption alone
    # with room for the whole table it comes whole, and stops at the page's end
    everything = leaf_tokens(title) + sum(map(leaf_tokens, table)) + leaf_tokens(later)
    assert select([root], scores, everything, caption=2000).leaf_ids == {title.id, *(n.id for n in table), later.id}
    assert select([root], scores, everything - leaf_tokens(later), caption=2000).leaf_ids == \
        {title.id, *(n.id for n in table)}


def test_a_colon_does_not_bring_the_next_section(tmp_path):
    # A text file is all one page: the section bounds what a colon announces. (MuSiQue's paragraphs
    # are cut off after "comprises the following:", and the next article is another garden.)
    text = ("# Gardens\n\n## Shah Abdul Latif\n\nThe herbarium complex comprises the following:\n\n"
            "## Pretoria\n\nThe Pretoria garden is a national garden.\n")
    db = build_store(tmp_path / "colon.db", {"gardens.md": text}, tmp_path)
    root = load_tree(db, 1)
    colon, other = [n for n in walk(root) if n.is_leaf]
    assert announces_next(colon.text) and other.page_start == colon.page_end
    scores = score_trees([root], {colon.id: 0.9}, {}, 0.0)
    # (a fill floor over the document's inherited score, so only an announcement could bring `other`)
    assert select([root], scores, 2000, 0.9, caption=2000).leaf_ids == {colon.id}


def test_what_announces_the_next_leaf():
    assert announces_next("Selected financial data for the Domestic segment was as follows ($ in millions):")
    assert announces_next("CONSOLIDATED STATEMENTS OF OPERATIONS\n(In thousands, except per share data)")
    assert announces_next("SUPPLEMENTAL DATA\n\n(In thousands)\n\n(Unaudited)")
    assert not announces_next("Revenue grew 12% (in millions of units sold) last year.")
    assert not announces_next("Net revenues | 13,127,485 | 9,680,140")


def test_a_paragraph_the_context_holds_already_is_not_taken_again(tmp_path):
    # Corpora repeat paragraphs (two pages listing the same host cities): the second copy would
    # spend the budget on nothing new, so the next best new paragraph is taken instead.
    listing = ("This is a list of host cities of the Olympic Games, both summer and winter, since the modern "
               "Olympics began in 1896. Since then, summer games have usually been held every four years.")
    db = build_store(tmp_path / "dup.db", {
        "hosts.md": f"# Host cities\n\n{listing}\n",
        "hosts_copy.md": f"# Host cities of the Games\n\n{listing.replace('This is', 'Below is')}\n",
        "beijing.md": "# Beijing\n\nThe 2022 Winter Olympics were held in Beijing, which fell on June 6, 1644.\n",
    }, tmp_path)
    roots = [load_tree(db, doc_id) for doc_id in (1, 2, 3)]
    first, copy, new = ([n for n in walk(root) if n.is_leaf][0] for root in roots)
    scores = score_trees(roots, {first.id: 0.9, copy.id: 0.85, new.id: 0.5}, {}, 0.0)
    budget = leaf_tokens(first) + max(leaf_tokens(copy), leaf_tokens(new))
    assert select(roots, scores, budget).leaf_ids == {first.id, new.id}
    assert select(roots, scores, budget, duplicate_share=0).leaf_ids == {first.id, copy.id}
