"""Whole-document scoring and the search loop, on real stores with the shared fake models:
candidate documents, local scores for every leaf, the frontier (neighbours, bridge hops,
sub-question lanes), the stop rules and precise mode."""

import re

import pytest

from longqa.ask.search.bridge import bridge_entities, bridge_query
from longqa.ask.search.queries import is_new
from longqa.ask.analysis.asked import read
from longqa.ask.search.relevance import answer_shape_present
from longqa.ask.prompts import SUFFICIENCY_SUFFIX, sufficiency_prompt
from longqa.ask.settings import DEFAULTS, applied
from longqa.retrieve.docscore import candidate_documents, document_scores, document_weights
from longqa.retrieve.local import local_scores
from longqa.retrieve.settings import RetrievalSettings
from longqa.store.nodes import load_tree
from longqa.structure.tree import walk
from tests.ask_support import article, build_store, filler, films_corpus, reactor_handbook
from tests.ask_support import make_pipeline as _make_pipeline
from tests.fakes import FakeEmbedder, FakeGenerator


def make_pipeline(db, generator=None, **options):
    """These tests watch the search at small budgets: the context is its picks, not the excerpt of
    a larger search that small budgets otherwise get (tests/ask/test_excerpt.py)."""
    options.setdefault("excerpt_below", 0)
    return _make_pipeline(db, generator, **options)


def filing() -> str:
    """A filing-like document: the best hit announces the figures, the next leaf holds them
    without repeating any word of the question."""
    paragraphs = [
        ("Overview", "Orion Foods makes frozen meals for grocery chains across three regions. " + filler("p1")),
        ("Results", "Net revenue reported by Orion Foods for the fiscal year is set out in the next table. " + filler("p2")),
        ("Results", "4,512 million dollars this year; 3,977 million dollars in the prior period. " + filler("p3")),
        ("Results", "Segment commentary appears in the management review for each region. " + filler("p4")),
        ("Results", "Headcount rose in two regions while one plant closed in the north. " + filler("p5")),
        ("Policies", "Revenue recognition follows the shipment of goods to grocery customers. " + filler("p6")),
        ("Policies", "Orion Foods records freight costs as cost of sales for every region it serves. " + filler("p7")),
        ("Risks", "Foods prices and revenue may change with weather and freight costs in a region. " + filler("p8")),
    ]
    text, current = ["# Orion Foods Annual Report\n"], None
    for section, paragraph in paragraphs:
        if section != current:
            text.append(f"## {section}\n")
            current = section
        text.append(paragraph + "\n")
    return "\n".join(text)


def says(word, label=" yes", otherwise=" no"):
    """A FakeGenerator `choose`: the sufficiency probe answers yes once `word` is shown."""
    def choose(prompt, labels):
        if prompt.endswith(SUFFICIENCY_SUFFIX):
            return label if word in prompt else otherwise
        return None
    return choose


@pytest.fixture
def films_db(tmp_path, db_path):
    return build_store(db_path, {"films.md": films_corpus()}, tmp_path)


@pytest.fixture
def filing_db(tmp_path, db_path):
    return build_store(db_path, {"orion.md": filing()}, tmp_path)


def adds(refined):
    return [s for s in refined.steps if s.action == "add"]


def stop_of(refined):
    return [s for s in refined.steps if s.action == "stop"][0]


# -- document-level scores and whole-document local scores --------------------------------------
def test_candidate_documents_keep_those_close_to_the_best():
    scores = document_scores({1: 0.9, 2: 0.2, 3: 0.85, 4: 0.5}, {1: 10, 2: 10, 3: 11, 4: 12})
    assert scores == {10: 0.9, 11: 0.85, 12: 0.5}
    assert candidate_documents(scores, relative=0.6, max_docs=8) == [10, 11]
    assert candidate_documents(scores, relative=0.5, max_docs=8) == [10, 11, 12]
    assert candidate_documents(scores, relative=0.5, max_docs=1) == [10]
    assert document_weights(scores, [10, 12]) == {10: 1.0, 12: pytest.approx(0.5 / 0.9)}


def test_every_leaf_of_a_candidate_document_gets_a_local_score(tmp_path, db_path):
    db = build_store(db_path, {"handbook.md": reactor_handbook()}, tmp_path)
    root = load_tree(db, 1)
    leaves = [n.id for n in walk(root) if n.is_leaf]
    embedder = FakeEmbedder()
    from longqa.store.vectors import load_vectors

    question = "How often are fuel assemblies replaced?"
    scores = local_scores(db, question, leaves, [1], "both", load_vectors(db, embedder.name),
                          embedder.embed([question])[0], settings=RetrievalSettings())
    assert set(scores.fused) == set(leaves)
    assert min(scores.bm25.values()) == 0.0 and max(scores.bm25.values()) == 1.0
    assert min(scores.dense.values()) == 0.0 and max(scores.dense.values()) == 1.0
    best = max(scores.fused, key=scores.fused.get)
    assert "Fuel assemblies are replaced" in next(n.text for n in walk(root) if n.id == best)
    # leaves first-stage retrieval never returned still score, so the budget can be filled
    assert sum(1 for v in scores.fused.values() if v > 0) > 20


def test_whole_document_scoring_fills_the_budget(filing_db):
    question = "What net revenue did Orion Foods report?"
    # the hand-weighted leaf score, whose only signal outside the first stage's hits is this one
    whole = make_pipeline(filing_db, FakeGenerator(), budget=400, k=1, use_loop=False,
                          learned_leaves=False).retrieve_context(question)
    hits_only = make_pipeline(filing_db, FakeGenerator(), budget=400, k=1, whole_documents=False,
                              use_loop=False, learned_leaves=False).retrieve_context(question)
    # first-stage retrieval returned one leaf per retriever: only their section had a score
    assert {p.section for p in hits_only.passages} == {"Results"}
    # every leaf sharing the question's words now scores, wherever it is, and fills the budget
    assert {"Results", "Policies", "Risks"} <= {p.section for p in whole.passages}
    assert hits_only.context_tokens < whole.context_tokens <= 400
    assert "Foods prices and revenue" in whole.context and "Foods prices and revenue" not in hits_only.context


# -- the loop: frontier, bridge, lanes -----------------------------------------------------------
def test_bridge_step_finds_the_article_that_shares_no_word_with_the_question(films_db):
    question = "Where did the woman who directed Cold Harbour grow up?"
    refined = make_pipeline(films_db, FakeGenerator(), budget=160, hop_after=1).retrieve_context(question)
    assert refined.analysis.type == "multi-bridge"
    bridges = [s for s in refined.steps if s.action == "bridge"]
    assert bridges and bridges[0].details["entity"] == "Lena Marsh"
    assert bridges[0].details["query"] == "Lena Marsh woman grow"
    picked = [s for s in adds(refined) if s.details["reason"] == "bridge"]
    assert picked and "Tromso" in refined.context
    # without the bridge step the same budget is filled with the distractors instead
    plain = make_pipeline(films_db, FakeGenerator(), budget=160, hop_after=1, use_expansion=False
                          ).retrieve_context(question)
    assert "Tromso" not in plain.context and "Cold Harbour is a 1968" in plain.context
    assert not [s for s in plain.steps if s.action == "bridge"]


def test_what_a_bridge_query_found_fills_the_budget_after_the_loop(tmp_path, db_path):
    """The second article sits in a document first-stage retrieval never chose; once a bridge hop
    brought it in, its leaves keep the bridge query's scores when the rest of the budget is filled."""
    people = "\n".join([
        article("Lena Marsh", "Lena Marsh spent her childhood in Tromso, a small fishing port."),
        article("Lena Marsh career", "Lena Marsh later taught at the Tromso film school for a decade."),
        article("Ola Brandt", "Ola Brandt was a painter of coastal scenes."),
    ])
    db = build_store(db_path, {"films.md": films_corpus(), "people.md": people}, tmp_path)
    question = "Where did the woman who directed Cold Harbour grow up?"
    refined = make_pipeline(db, FakeGenerator(), budget=600, hop_after=1, max_nodes=2).retrieve_context(question)
    assert [s.details["entity"] for s in refined.steps if s.action == "bridge"][:1] == ["Lena Marsh"]
    assert stop_of(refined).details["reason"] == "max nodes"
    # the loop took the best leaf and the hop's best hit; the fill adds the other Lena Marsh leaf
    assert "spent her childhood in Tromso" in refined.context
    assert "taught at the Tromso film school" in refined.context
    assert all(p.score > 0 for p in refined.passages if p.doc.startswith("Lena Marsh"))


def test_leaf_after_the_best_hit_comes_in_through_the_frontier(filing_db):
    question = "What net revenue did Orion Foods report?"
    generator = FakeGenerator(choose=says("4,512"))
    refined = make_pipeline(filing_db, generator, budget=140).retrieve_context(question)
    steps = adds(refined)
    assert steps[0].details["reason"] == "best leaf" and steps[1].details["reason"] == "neighbour"
    assert steps[0].details["p_yes"] == pytest.approx(0.2) and steps[1].details["p_yes"] == pytest.approx(0.8)
    assert stop_of(refined).details["reason"] == "sufficient" and len(steps) == 2
    assert "4,512 million" in refined.context
    # LongRefiner's greedy selection alone spends the same budget on leaves sharing words
    greedy = make_pipeline(filing_db, FakeGenerator(), budget=140, use_loop=False).retrieve_context(question)
    assert "4,512 million" not in greedy.context


def test_the_fill_extends_a_pick_into_a_contiguous_run(filing_db):
    """The loop stops at its first pick; the rest of the budget then goes to the leaves next to it
    (the figures after the table's lead-in) rather than to distant leaves that share words."""
    question = "What net revenue did Orion Foods report?"
    def ask(weight):
        return make_pipeline(filing_db, FakeGenerator(choose=says("Orion")), budget=150,
                             fill_run_weight=weight).retrieve_context(question)
    plain, runs = ask(0.0), ask(0.8)
    for refined in (plain, runs):
        assert len(adds(refined)) == 1 and stop_of(refined).details["reason"] == "sufficient"
        assert "set out in the next table" in refined.context
    assert "4,512 million" not in plain.context
    assert "4,512 million" in runs.context
    lead, figures = (runs.context.index(t) for t in ("set out in the next table", "4,512 million"))
    assert lead < figures  # in document order, one after the other


def test_a_section_whose_leaves_are_picked_comes_in_whole(filing_db):
    """Each picked child raises its section's claim: after two leaves of "Results" the section
    itself is the next pick (a statement split into rows comes whole, not row by row)."""
    question = "What net revenue did Orion Foods report?"
    def ask(gather):
        return make_pipeline(filing_db, FakeGenerator(choose=says("nothing says this")), budget=2000,
                             max_nodes=3, parent_gather=gather).retrieve_context(question)
    gathered, plain = ask(0.33), ask(0.0)
    assert [s.details["reason"] for s in adds(gathered)] == ["best leaf", "neighbour", "parent"]
    assert adds(gathered)[2].details["kind"] == "section"
    assert "parent" not in [s.details["reason"] for s in adds(plain)]


def test_sub_questions_take_turns(tmp_path, db_path):
    db = build_store(db_path, {"handbook.md": reactor_handbook()}, tmp_path)
    refined = make_pipeline(db, FakeGenerator(choose=says("never")), budget=700, max_nodes=4).retrieve_context(
        "Compare the Cooling System and the Staff Training rules")
    assert [s.details["query"] for s in refined.steps if s.action == "split"] == [
        "Compare Cooling System rules", "Compare Staff Training rules"]
    picked = [p for p in refined.passages]
    sections = {p.section.split(" > ")[0] for p in picked}
    assert {"Cooling System", "Staff Training"} <= sections


# -- stop rules ----------------------------------------------------------------------------------
def test_confidence_and_patience_end_the_loop(filing_db):
    question = "What net revenue did Orion Foods report?"
    sure = make_pipeline(filing_db, FakeGenerator(choose=says("Orion")), budget=400).retrieve_context(question)
    assert len(adds(sure)) == 1 and stop_of(sure).details["reason"] == "sufficient"
    patient = make_pipeline(filing_db, FakeGenerator(choose=says("Orion")), budget=400, patience=2
                            ).retrieve_context(question)
    assert len(adds(patient)) == 2 and stop_of(patient).details["reason"] == "sufficient"
    strict = make_pipeline(filing_db, FakeGenerator(choose=says("Orion")), budget=400, confidence=0.9
                           ).retrieve_context(question)
    assert stop_of(strict).details["reason"] != "sufficient"  # p(yes) = 0.8 never reaches t_p = 0.9


def test_caps_end_the_loop(filing_db):
    question = "What net revenue did Orion Foods report?"
    never = FakeGenerator(choose=says("nothing says this"))
    capped = make_pipeline(filing_db, never, budget=2000, max_nodes=2).retrieve_context(question)
    assert len(adds(capped)) == 2 and stop_of(capped).details["reason"] == "max nodes"
    timed = make_pipeline(filing_db, never, budget=2000, max_seconds=0).retrieve_context(question)
    assert adds(timed) == [] and stop_of(timed).details["reason"] == "max seconds"
    full = make_pipeline(filing_db, never, budget=150).retrieve_context(question)
    assert stop_of(full).details["reason"] in ("budget full", "frontier empty") and full.context_tokens <= 150
    assert stop_of(full).details["tokens"] <= 150


def test_precise_mode_retries_with_whole_sections(filing_db):
    question = "What net revenue did Orion Foods report?"
    # the model says yes only when it sees the policy paragraphs together: a section, not a leaf
    generator = FakeGenerator(choose=says("freight costs as cost of sales"))
    refined = make_pipeline(filing_db, generator, budget=600, max_nodes=1).retrieve_context(question)
    precise = [s for s in refined.steps if s.action == "precise"]
    assert precise and precise[0].details["sections"]
    off = make_pipeline(filing_db, FakeGenerator(choose=says("freight costs as cost of sales")), budget=600,
                        max_nodes=1, precise_mode=False).retrieve_context(question)
    assert not [s for s in off.steps if s.action == "precise"]


def test_loop_off_is_plain_greedy_selection(filing_db):
    refined = make_pipeline(filing_db, FakeGenerator(), budget=300, use_loop=False).retrieve_context(
        "What net revenue did Orion Foods report?")
    assert [s.action for s in refined.steps] == ["outline"]
    assert refined.passages


# -- pieces --------------------------------------------------------------------------------------
def test_bridge_entities_come_from_the_evidence_not_the_question():
    question = "Who was the first president of the association which published Journal of Psychotherapy Integration?"
    evidence = ["The Journal of Psychotherapy Integration is a peer-reviewed academic journal published by the "
                "American Psychological Association on behalf of the Society for the Exploration of Psychotherapy "
                "Integration. Several editors served it. The editor is Jennifer Callahan."]
    found = bridge_entities(question, evidence, limit=3)
    assert [e for e, _ in found][:2] == ["American Psychological Association", "Society for the Exploration"]
    assert bridge_query(question, found[0][0], [found[0][1]]) == "American Psychological Association first president"
    assert all(e != "Several" for e, _ in bridge_entities(question, evidence, limit=10))


def test_a_bridge_entity_must_be_new_by_the_share_the_setting_asks():
    question = "Which institute trained the founder of the pump maker?"
    evidence = ["The founder trained at the Leeds Institute before starting the pump maker."]
    # "Leeds Institute": one of its two words is the question's own.
    assert [e for e, _ in bridge_entities(question, evidence)] == ["Leeds Institute"]
    with applied(DEFAULTS.with_values({"search.bridge_new_share": 0.6})):
        assert bridge_entities(question, evidence) == []


def test_a_query_is_the_same_as_one_asked_by_the_overlap_the_setting_asks():
    asked = ["filter replacement interval pump schedule"]
    assert not is_new("pump filter replacement interval", asked)  # four of five words shared: 0.8
    with applied(DEFAULTS.with_values({"expansion.same_query_overlap": 0.9})):
        assert is_new("pump filter replacement interval", asked)


def test_bridge_entity_nearest_the_rarest_question_word():
    question = "When did the state whose official sport is jousting make anglicanism its established religion?"
    row = ("State Sport Year Adopted Designation Alaska Dog Mushing 1972 Official state sport Colorado Pack "
           "Burro Racing 2012 Official summer heritage sport Maryland Jousting 1962 Official state sport")
    found = bridge_entities(question, [row], 2, {"jousting": 5.0, "sport": 1.0, "state": 0.5})
    assert found[0][0] == "Maryland Jousting"


def test_answer_shape_rule():
    assert not answer_shape_present("quantity", "How much net revenue in 2021?", ["Net revenue in 2021 rose."])
    assert answer_shape_present("quantity", "How much net revenue in 2021?", ["Net revenue in 2021 was $4,512 million."])
    assert not answer_shape_present("date", "When was the mill built?", ["The mill was built by the Pratt family."])
    assert answer_shape_present("date", "When was the mill built?", ["The mill was built in 1852."])
    assert answer_shape_present("any", "Why did the mill close?", ["Demand fell."])
    # the shape is the Asked record's: "how long" asks a duration, a figure
    assert read("How long does the backwash take?").want == "duration"
    assert not answer_shape_present("duration", "How long does the backwash take?", ["The backwash is run by hand."])
    assert answer_shape_present("duration", "How long does the backwash take?", ["The backwash takes 12 minutes."])


def test_sufficiency_prompt_grows_by_appending_so_the_kv_cache_is_reused():
    one = sufficiency_prompt("Q?", ["first node"])
    two = sufficiency_prompt("Q?", ["first node", "second node"])
    assert two.startswith(one[: -len(SUFFICIENCY_SUFFIX)])
    assert one.index("Q?") < one.index("first node")  # the question comes before the nodes


def test_decisions_weighted_by_measured_skill():
    from longqa.models import skill

    measured = FakeGenerator()
    measured.name = "gemma-3-270m-q4_k_m"
    table = next(t for prefix, t in skill.measured().items() if measured.name.startswith(prefix))
    assert {"scope", "sufficiency", "router-expand", "router-answer"} <= set(table)  # written by bench/decisions.py
    for decision, (value, chance) in table.items():
        assert skill.weight(measured, decision) == pytest.approx(max(0.0, (value - chance) / (1 - chance)))
    assert skill.weight(measured, "a decision never measured") == 0.0
    assert skill.weight(FakeGenerator(), "sufficiency") == 1.0  # measured perfect (tests/conftest.py)
    assert skill.weight(None, "sufficiency") == 0.0


def test_a_broken_decisions_table_is_one_clear_error(tmp_path, monkeypatch):
    from longqa.errors import ModelError
    from longqa.models import skill

    broken = tmp_path / "decisions.json"
    broken.write_text('{"models": {"gemma-3-270m": {"decisions": {"scope": {"skill": 0.7}}}}}', encoding="utf-8")
    monkeypatch.setattr(skill, "DECISIONS_FILE", broken)
    skill.measured.cache_clear()
    try:
        with pytest.raises(ModelError, match=r"decisions.json: not a table of measured decisions \(KeyError") as caught:
            skill.measured()
        assert "\n" not in str(caught.value)
    finally:
        skill.measured.cache_clear()


def test_decisions_at_chance_are_not_asked(filing_db):
    generator = FakeGenerator()
    generator.name = "gemma-3-270m-q4_k_m"  # measured: type and outline choice at chance
    refined = make_pipeline(filing_db, generator, budget=300).retrieve_context("What net revenue did Orion Foods report?")
    asked = [p.rsplit("\n", 1)[-1] for _, p in generator.calls]
    assert "The section that answers the question is section" not in asked
    assert not any(p.endswith("Type:") for p in asked)
    assert refined.analysis.decided_by["type"] == "default"
    assert [s.action for s in refined.steps][0] == "outline-skipped"


# -- RDR2's router -------------------------------------------------------------------------------
def routes(pick):
    """A FakeGenerator `route`: `pick(lines)` gets the shown tree as {id: text} and returns a move."""
    def route(prompt, grammar):
        tree = prompt.rsplit("Tree:\n", 1)[1].rsplit("\nAction:", 1)[0]
        lines = {int(m.group(1)): m.group(2) for m in re.finditer(r"(?m)^\s*(\d+): (.*)$", tree)}
        return " " + pick(lines)
    return route


def line_with(lines, words):
    return next(i for i, text in lines.items() if text.startswith(words))


def test_router_expand_brings_in_the_chosen_node(filing_db):
    question = "What net revenue did Orion Foods report?"
    generator = FakeGenerator(route=routes(lambda lines: f"EXPAND({line_with(lines, 'Foods prices')})"))
    refined = make_pipeline(filing_db, generator, budget=400, max_nodes=2, router="on").retrieve_context(question)
    routed = [s for s in refined.steps if s.action == "router"]
    first = adds(refined)[0]
    assert routed[0].details["move"] == "EXPAND" and first.details["node"] == routed[0].details["ids"][0] and first.details["reason"] == "router"
    assert "Foods prices and revenue" in refined.context
    assert all(s.details["seconds"] >= 0 for s in routed)
    # the node was not the loop's own first choice
    plain = make_pipeline(filing_db, FakeGenerator(), budget=400, max_nodes=2, router="off").retrieve_context(question)
    assert adds(plain)[0].details["node"] != first.details["node"] and adds(plain)[0].details["reason"] == "best leaf"
    assert not [s for s in plain.steps if s.action.startswith("router")]


def test_router_answer_and_refuse_end_the_loop(filing_db):
    question = "What net revenue did Orion Foods report?"
    answer = FakeGenerator(route=routes(lambda lines: f"ANSWER({line_with(lines, '4,512 million')})"))
    refined = make_pipeline(filing_db, answer, budget=400, router="on").retrieve_context(question)
    routed = [s for s in refined.steps if s.action == "router"]
    assert len(routed) == 1 and routed[0].details["move"] == "ANSWER" and routed[0].details["added"] == routed[0].details["ids"]
    assert adds(refined) == [] and stop_of(refined).details["reason"] == "router answer"
    assert "4,512 million" in refined.context
    refuse = FakeGenerator(route=routes(lambda lines: "REFUSE"))
    refused = make_pipeline(filing_db, refuse, budget=400, router="on").retrieve_context(question)
    assert [s.details["move"] for s in refused.steps if s.action == "router"] == ["REFUSE"]
    assert stop_of(refused).details["reason"] == "router refuse" and refused.found  # found is the retrieval's verdict
    assert not [s for s in refused.steps if s.action == "precise"]


def test_router_junk_reply_changes_nothing(filing_db):
    question = "What net revenue did Orion Foods report?"
    junk = FakeGenerator(choose=says("4,512"), route=routes(lambda lines: "EXPAND(999999) I think"))
    refined = make_pipeline(filing_db, junk, budget=140, router="on").retrieve_context(question)
    plain = make_pipeline(filing_db, FakeGenerator(choose=says("4,512")), budget=140, router="off"
                          ).retrieve_context(question)
    assert {s.details["move"] for s in refined.steps if s.action == "router"} == {"none"}
    assert [s.details["node"] for s in adds(refined)] == [s.details["node"] for s in adds(plain)]


def test_router_at_chance_is_not_asked(filing_db):
    from longqa.models import skill

    asked = []
    generator = FakeGenerator(route=lambda prompt, grammar: asked.append(prompt) or " REFUSE")
    generator.name = "gemma-3-270m-q4_k_m"
    assert skill.router_weight(generator) == 0.0  # measured at chance (bench/decisions.py)
    question = "What net revenue did Orion Foods report?"
    refined = make_pipeline(filing_db, generator, budget=300).retrieve_context(question)
    assert asked == [] and "router-skipped" in [s.action for s in refined.steps]
    assert stop_of(refined).details["reason"] != "router refuse"
    # forced on, the same model is asked
    forced = make_pipeline(filing_db, generator, budget=300, router="on").retrieve_context(question)
    assert asked and stop_of(forced).details["reason"] == "router refuse"


# -- spreading over candidate documents the question does not tell apart -------------------------
def contract(party: str, renewal: str, others: list[str]) -> str:
    """A contract-like document: its renewal clause and other clauses, each a leaf of its own."""
    clauses = [f"## Renewal\n\n{renewal} {filler(party)}"] + [f"## Clause {i}\n\n{text} {filler(f'{party}{i}')}"
                                                            for i, text in enumerate(others, start=1)]
    return f"# Supply Agreement of {party}\n\n" + "\n\n".join(clauses) + "\n"


@pytest.fixture
def contracts_db(tmp_path, db_path):
    """Three contracts alike to a question that names none of them; the first says "renewal term"
    in several clauses, so its leaves alone would fill a small budget."""
    first = contract("Alder", "This contract renews for a renewal term of two years.",
                     ["The renewal term notice goes to the Alder office in writing.",
                      "Fees for a renewal term follow the price list of the contract year.",
                      "Either party may end a renewal term with ninety days notice under this contract."])
    second = contract("Birch", "Each renewal term of this contract lasts one year unless Birch objects.",
                      ["Birch ships goods to the buyer's dock every week.", "Invoices are paid within thirty days."])
    third = contract("Cedar", "The contract continues for a renewal term of six months at Cedar's option.",
                     ["Cedar keeps the goods insured while in transit.", "Disputes go to arbitration in Oslo."])
    return build_store(db_path, {"alder.md": first, "birch.md": second, "cedar.md": third}, tmp_path)


def test_spread_gives_each_close_candidate_document_its_best_leaf(contracts_db):
    question = "Highlight the parts of this contract related to the renewal term."
    narrow = make_pipeline(contracts_db, FakeGenerator(), budget=200, use_loop=False,
                           spread_docs=0).retrieve_context(question)
    spread = make_pipeline(contracts_db, FakeGenerator(), budget=200, use_loop=False,
                           spread_docs=3).retrieve_context(question)
    docs = lambda refined: {p.doc for p in refined.passages}  # noqa: E731
    # the best document's own clauses fill the budget when nothing spreads it
    assert len(docs(narrow)) < 3
    # spread: each contract's renewal clause is in, the best document's still first in the budget
    assert len(docs(spread)) == 3
    clauses = ("lasts one year unless Birch", "six months at Cedar")
    assert all(clause in spread.context for clause in clauses)
    assert not all(clause in narrow.context for clause in clauses)
    step = [s for s in spread.steps if s.action == "spread"]
    # without the loop nothing was picked before the spread: each document gives its best leaf
    assert step and len(step[0].details["nodes"]) == 3
    assert spread.context_tokens <= 200


def test_spread_leaves_a_single_candidate_document_alone(filing_db):
    question = "What net revenue did Orion Foods report?"
    plain = make_pipeline(filing_db, FakeGenerator(), budget=400, spread_docs=0).retrieve_context(question)
    spread = make_pipeline(filing_db, FakeGenerator(), budget=400, spread_docs=8).retrieve_context(question)
    assert [p.node_id for p in spread.passages] == [p.node_id for p in plain.passages]
    assert not [s for s in spread.steps if s.action == "spread"]


def test_spread_only_when_the_search_found_no_sufficient_evidence(contracts_db):
    question = "Highlight the parts of this contract related to the renewal term."
    spreads = lambda refined: [s for s in refined.steps if s.action == "spread"]  # noqa: E731
    never = make_pipeline(contracts_db, FakeGenerator(), budget=200, confidence=1.01,
                          spread_docs=3).retrieve_context(question)
    at_once = make_pipeline(contracts_db, FakeGenerator(), budget=200, confidence=0.0,
                            spread_docs=3).retrieve_context(question)
    assert stop_of(never).details["reason"] != "sufficient" and spreads(never)
    assert len({p.doc for p in never.passages}) == 3
    assert stop_of(at_once).details["reason"] == "sufficient" and not spreads(at_once)
