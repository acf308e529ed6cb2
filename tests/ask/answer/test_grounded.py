"""The answer stage's parts on real text: sentence offsets, candidate spans, focus, grounded choice.

The store is real (tests/ask_support.py builds it through the real ingest path); the generator is
the shared FakeGenerator, which has no preference among candidates, so what is tested here is the
rule side of the choice and the fidelity of every quote.
"""

from __future__ import annotations

import pytest

from longqa.ask.answer import focus
from longqa.ask.answer import choose, grounded
from longqa.ask.answer import hops
from longqa.ask.answer import kinds
from longqa.text import sentences
from longqa.ask.answer import span_fit
from longqa.text import spans
from longqa.ask.answer.stage import plan_answer
from longqa.ask.analysis import asked
from longqa.ask.analysis.asked import read
from longqa.ask.settings import DEFAULTS, applied

ANSWER = DEFAULTS.answer
from tests.ask_support import build_store, make_pipeline, reactor_handbook
from tests.fakes import FakeEmbedder, FakeGenerator

TEXT = (
    "The works takes power from two feeders. If both fail, two standby diesel generators start within "
    "45 seconds. The fuel store holds 60,000 litres of diesel, enough to run both generators for about "
    "52 hours, or one generator for about 4 days. In 2023 the generators ran for 31 hours in total."
)


def test_sentences_are_offsets_into_the_text():
    text = "Flow is 40 Ml/d. The U.S. plant, e.g. Unit No. 5, opened in 1998.\nPump | 12 | 13\nJ. Smith signed it."
    found = [text[a:b] for a, b in sentences.split(text)]
    assert found == ["Flow is 40 Ml/d.", "The U.S. plant, e.g. Unit No. 5, opened in 1998.", "Pump | 12 | 13",
                     "J. Smith signed it."]
    assert sentences.split("   ") == []


def test_candidates_keep_units_qualifiers_and_names():
    sentence = "Revenue rose 12% to $1.2 billion on March 3, 2019, said Lena Marsh of the Bank of England."
    texts = {c.text: c.kind for c in span_fit.candidates(sentence)}
    assert texts["12%"] == "quantity" and texts["$1.2 billion"] == "quantity"
    assert texts["March 3, 2019"] == "date"
    assert texts["Lena Marsh"] == "name" and texts["Bank of England"] == "name"
    for c in span_fit.candidates(sentence):
        assert sentence[c.start:c.end] == c.text
    assert "about 52 hours" in {c.text for c in span_fit.candidates(TEXT)}
    found = {c.text: c.kind for c in span_fit.candidates("Standby generators | Load test for 2 hours | Monthly")}
    assert found["Monthly"] == "frequency"
    assert {c.text: c.kind for c in span_fit.candidates("Fuel is replaced every 18 months.")}["every 18 months"] == "frequency"
    counted = {c.text: c.kind for c in span_fit.candidates("The Court has nine justices; one of them serves for three years.")}
    assert counted["nine"] == "quantity" and counted["three years"] == "quantity" and counted.get("one") != "quantity"


def test_candidates_drop_possessives():
    found = {c.text for c in span_fit.candidates("Usher's single used a drum machine, with hybrid models.")}
    assert "Usher" in found and "Usher's" not in found


def test_a_bridge_entity_is_never_the_answer(tmp_path):
    # Two hops: the question names the company; its founder is the bridge, the town is the answer.
    doc = ("# Companies\n\nThe Trussed Concrete Steel Company was founded by Julius Kahn in 1903.\n\n"
           "# People\n\nJulius Kahn was raised in Detroit, Michigan, where his father ran a store.\n")
    db = build_store(tmp_path / "bridge.db", {"companies.md": doc}, tmp_path, FakeEmbedder())
    question = "Where was the founder of the Trussed Concrete Steel Company raised?"
    pipeline = make_pipeline(db, FakeGenerator())
    refined = pipeline.retrieve_context(question)
    plan = plan_answer(read(refined.question), refined.passages, "multi-bridge", 0.2, FakeEmbedder())
    _, grounding = choose.choose_short(FakeGenerator(), read(question), plan.focused, plan.prompt, plan.sentences,
                                       bridges=["Julius Kahn"])
    _, unaware = choose.choose_short(FakeGenerator(), read(question), plan.focused, plan.prompt, plan.sentences)
    # the bridge entity reads as the question's own words once the search went through it
    assert features_of(grounding, "Julius Kahn")["repeats_question"] == 1.0
    assert features_of(unaware, "Julius Kahn")["repeats_question"] == 0.0
    assert features_of(grounding, "Detroit")["near_bridge"] > 0.5


@pytest.mark.parametrize("question, kind", [
    ("How long can the generators run?", "duration"),
    ("How often are the generators tested?", "frequency"),
    ("When did the plant open?", "date"),
    ("How many litres does the store hold?", "quantity"),
    ("What was the electricity use per cubic metre in 2023?", "quantity"),
    ("What is the chlorine dose?", "quantity"),
    ("Who signed the contract?", "name"),
    ("Is the plant still running?", "yesno"),
    ("Which magazine came first, Arthur's Magazine or First for Women?", "option"),
    ("What colour is the roof?", "any"),
    ('Highlight the parts (if any) of this contract related to "Expiration Date". Details: When does it end?',
     "sentence"),
    ("OK good. What do I do if I want to apply for a repayment plan?", "sentence"),
    ("Could you please explain how the plan works?", "sentence"),
    ("Can I drive in the meantime?", "yesno"),  # an auxiliary verb opens it: yes or no, by its form
    ("Can you tell me how the filters are cleaned?", "sentence"),
    ("I want to know what kind of forbearance is available to me", "sentence"),
    ("You are asked to act as a member of the call and answer the question: What drove sales?", "sentence"),
    ("Who wrote Me and Bobby McGee?", "name"),
    ("When did World War I end?", "date"),
    ("In what month did the works open?", "month"),
    ("What is the size of the civil case dataset?", "quantity"),
    # a "when" or "where" after a noun describes; the question word asks
    ("Who was president when the area where the wind farm is located became a state?", "name"),
    ("The state where Henry Worrall died has how many congressional districts?", "quantity"),
    ("How much was his bonus when he joined the company?", "quantity"),
    ("Hayden is from Canada, but where does Buck-Tick hail from?", "name"),
    ("In where was it found?", "name"),
])
def test_wanted_answer_kind(question, kind):
    assert asked.wanted(question) == kind


def test_alternatives_and_lettered_options():
    assert asked.alternatives("Which magazine came first, Arthur's Magazine or First for Women?") == [
        "Arthur's Magazine", "First for Women"]
    question = "What does the captain fear?\n\n(A) the dark\n(B) losing the ship\n(C) nothing\n(D) the crew"
    assert asked.lettered_options(question) == {"A": "the dark", "B": "losing the ship", "C": "nothing", "D": "the crew"}
    assert asked.lettered_options(" ".join(question.split()))["B"] == "losing the ship"  # collapsed whitespace
    assert asked.question_stem(question) == "What does the captain fear?"
    assert asked.lettered_options("Is (A) a grade?") == {}


@pytest.fixture
def power_db(tmp_path):
    doc = "# Plant Manual\n\n## Power\n\n" + TEXT + "\n\n## Staff\n\nThe plant employs 42 operators on five shifts.\n"
    return build_store(tmp_path / "power.db", {"manual.md": doc}, tmp_path, FakeEmbedder())


def test_short_answer_prefers_the_span_near_the_question_words(power_db):
    pipeline = make_pipeline(power_db, FakeGenerator())
    result = pipeline.answer("How long can both generators run on the diesel in the fuel store?")
    # with a scripted model the choice rests on the features alone; the answer is on the shortlist
    assert "about 52 hours" in {c["text"] for c in result.grounding.candidates}
    assert result.grounding.mode == "span" and result.quotes
    kinds = [c["kind"] for c in result.grounding.candidates]
    assert "none" in kinds  # "The documents do not say." was a legal choice
    stored = " ".join(q.text for q in result.quotes) + TEXT + "The plant employs 42 operators on five shifts."
    assert all(c["text"] in stored or c["kind"] == "none" for c in result.grounding.candidates)


def test_every_quote_is_a_verbatim_substring_of_its_node(power_db):
    pipeline = make_pipeline(power_db, FakeGenerator())
    for question in ("How long can both generators run on the diesel?", "How many operators does the plant employ?",
                     "Explain how the plant keeps its power when the feeders fail."):
        result = pipeline.answer(question)
        assert result.quotes, question
        for quote in result.quotes:
            stored = power_db.execute("SELECT text FROM nodes WHERE id = ?", [quote.node_id]).fetchone()[0]
            assert stored[quote.char_start:quote.char_end] == quote.text
        if result.grounding.mode == "span":  # the answer span is inside its quote
            span = result.answer.rsplit(" [", 1)[0]
            assert span in result.quotes[0].text


def test_focus_keeps_few_tokens_and_the_best_sentence(power_db):
    refined = make_pipeline(power_db, FakeGenerator()).retrieve_context("How many operators does the plant employ?")
    plan = plan_answer(read(refined.question), refined.passages, "extractive", 0.2, FakeEmbedder())
    assert plan.mode == "short" and any("42 operators" in s.text for s in plan.focused)
    assert sum(len(s.text.split()) for s in plan.focused) < sum(len(p.text.split()) for p in refined.passages) + 1
    assert "Question: How many operators does the plant employ?" in plan.prompt
    broad = plan_answer(read(refined.question), refined.passages, "abstractive", 0.8, None)
    assert broad.mode == "free"


def test_no_answer_when_nothing_fits_and_the_model_says_so(power_db):
    def prefer_no_answer(prompt, labels):
        return next((label for label in labels if grounded.NO_ANSWER in label), None)

    pipeline = make_pipeline(power_db, FakeGenerator(choose=prefer_no_answer))
    result = pipeline.answer("Who designed the power plant?")  # the documents name nobody
    # "The documents do not say." is on every shortlist, and the model's vote for it is read
    none = next(c for c in result.grounding.pool if c.kind == "none")
    assert none.features["model_logprob"] == max(c.features["model_logprob"] for c in result.grounding.pool)
    assert "The documents do not say." in {c["text"] for c in result.grounding.candidates}
    if result.answer == grounded.NO_ANSWER:  # when it wins, nothing is quoted
        assert result.quotes == [] and result.grounding.mode == "none"


def test_yes_no_candidates_carry_the_word_rule_s_verdict_and_a_quote_that_agrees(power_db):
    pipeline = make_pipeline(power_db, FakeGenerator())
    for question, rule in (("Can the diesel generators run both for about 52 hours?", "Yes"),
                           ("Do the generators run on solar panels?", "No")):
        result = pipeline.answer(question)
        verdicts = {c.text: c.features["verdict_rule"] for c in result.grounding.pool if c.kind == "yesno"}
        assert verdicts == {rule: 1.0, ("No" if rule == "Yes" else "Yes"): 0.0}
        verdict = result.answer.split(" [")[0]
        assert verdict in ("Yes", "No") and result.grounding.mode == "yesno"
        negated = grounded._NEGATION.search(result.quotes[0].text) is not None
        assert negated == (verdict == "No") or not any(
            (grounded._NEGATION.search(s.text) is not None) == (verdict == "No") for s in result.grounding.focused)


def test_trace_links_answer_sentences_to_sources(power_db):
    refined = make_pipeline(power_db, FakeGenerator()).retrieve_context("How long can both generators run on the diesel?")
    found = focus.context_sentences(refined.passages)
    quotes = grounded.trace("Both generators can run for about 52 hours on the stored diesel [1].", found)
    assert quotes and "52 hours" in quotes[0].text


def test_reactor_handbook_short_answers_come_from_the_text(tmp_path):
    db = build_store(tmp_path / "r.db", {"reactor.md": reactor_handbook()}, tmp_path, FakeEmbedder())
    result = make_pipeline(db, FakeGenerator()).answer("How many hours of simulator training does each operator complete?")
    assert result.answer.startswith("120 hours")


FEES = """# Annual Report

## Principal Accountant Fees

The table below shows the fees billed by our auditors.

Fees | Fiscal 2019 | Fiscal 2018
Audit Fees (1) | $3,631,575 | $3,784,488
Audit-Related Fees (2) | 0 | 359,000
Tax Fees | 169,776 | (12,500)

Audit fees cover the annual audit and quarterly reviews.
"""


@pytest.fixture
def fees_db(tmp_path):
    return build_store(tmp_path / "fees.db", {"report.md": FEES}, tmp_path, FakeEmbedder())


@pytest.mark.parametrize("question, answer, operation", [
    ("How much were Audit fees in 2019?", "$3,631,575", "lookup"),
    ("What is the change in Audit Fees as a percentage between 2018 and 2019?", "-4.04%", "percent_change"),
    ("What is the average audit fees for 2018 and 2019?", "3,708,031.5", "mean"),
    ("What is the change in tax fees between 2018 and 2019?", "182,276", "change"),
    ("What were the tax fees in 2019 and 2018 respectively?", "169,776; (12,500)", "list"),
    ("What is the total tax fees for 2018 and 2019?", "157,276", "sum"),
])
def test_table_answers_are_computed_from_the_row_with_its_quotes(fees_db, question, answer, operation):
    result = make_pipeline(fees_db, FakeGenerator()).answer(question)
    assert result.grounding.mode == "computed"
    assert result.answer.rsplit(" [", 1)[0] == answer
    assert result.grounding.candidates[0]["kind"] == operation
    header, row = result.quotes
    assert "Fiscal 2019" in header.text and row.text.split(" | ")[0] in ("Audit Fees (1)", "Tax Fees")
    for quote in result.quotes:
        stored = fees_db.execute("SELECT text FROM nodes WHERE id = ?", [quote.node_id]).fetchone()[0]
        assert stored[quote.char_start:quote.char_end] == quote.text


def test_table_rules_step_aside_when_unsure(fees_db):

    assert read("Who audits the company?").arithmetic is None
    result = make_pipeline(fees_db, FakeGenerator()).answer("What is the change in legal fees between 2018 and 2019?")
    assert result.grounding.mode != "computed"  # no row is labelled "legal fees"


def test_highlight_questions_quote_the_best_sentence(power_db):
    result = make_pipeline(power_db, FakeGenerator()).answer(
        "Highlight the parts (if any) of this manual related to the diesel generators and the fuel store.")
    assert result.grounding.mode == "sentence"
    quote = result.quotes[0]
    assert result.answer.startswith(" ".join(quote.text.split())) and "diesel" in quote.text


def test_a_heading_that_repeats_the_question_is_not_quoted_as_its_answer(tmp_path):
    # L-Eval's help pages keep their headings as lines of text; the heading says every word of the
    # question and scores best, yet answers nothing.
    doc = ("Claims and decisions\n\nVA claim exam (C&P exam)\n\nAfter your VA claim exam we review all the "
           "evidence in your file, assign your disability rating and send you a decision letter.\n\n"
           "Multiple party claims\n\nA claim with more than one party goes to a special team.\n")
    db = build_store(tmp_path / "va.db", {"va.txt": doc}, tmp_path, FakeEmbedder())
    question = "Got it, I also want to know about the VA claim exam (C&P exam), what happens after I take the VA claim exam?"
    assert asked.wanted(question) == "sentence"
    result = make_pipeline(db, FakeGenerator(), coverage_min=0.0, cosine_min=0.0).answer(question)
    assert result.grounding.mode == "sentence"
    assert result.answer.startswith("After your VA claim exam we review"), result.grounding.candidates
    assert all(c["text"] != "VA claim exam (C&P exam)" for c in result.grounding.candidates)
    found = focus.context_sentences(make_pipeline(db, FakeGenerator()).retrieve_context(question).passages)
    heading = [s for s in found if s.text == "VA claim exam (C&P exam)"]
    assert heading and heading[0] not in grounded.answering(found, question)
    assert grounded.answering(heading, question) == heading  # nothing better: the heading stays


def test_the_model_chooses_among_the_best_sentences_to_quote(power_db):
    # The generator's probability of copying each of the best three sentences counts beside their
    # scores: a model that clearly prefers the runner-up quotes it.
    question = "Highlight the parts (if any) of this manual related to the diesel generators and the fuel store."
    plain = make_pipeline(power_db, FakeGenerator()).answer(question)
    shown = [c["text"] for c in plain.grounding.candidates]
    assert 2 <= len(shown) <= DEFAULTS.answer.sentence_choices
    runner_up = " " + " ".join(shown[1].split())
    chooser = FakeGenerator(choose=lambda prompt, labels: runner_up if runner_up in labels else None)
    result = make_pipeline(power_db, chooser).answer(question)
    assert result.answer.startswith(runner_up.strip()), result.grounding.candidates
    assert result.quotes[0].text == shown[1]


def test_an_option_question_is_answered_by_one_of_its_options(tmp_path):
    # A longer name around one option ("The Toy Manchester Terrier") scored best as a span; when
    # the sentences name both options, only they compete.
    doc = ("# Dogs\n\nThe Toy Manchester Terrier was bred from the Manchester Terrier in England.\n\n"
           "The Scotch Collie is a landrace whose ancestors include Gordon and Irish Setters.\n")
    db = build_store(tmp_path / "dogs.db", {"dogs.md": doc}, tmp_path, FakeEmbedder())
    question = "Which dog's ancestors include Gordon and Irish Setters: the Manchester Terrier or the Scotch Collie?"
    assert asked.wanted(question) == "option"
    result = make_pipeline(db, FakeGenerator(), coverage_min=0.0, cosine_min=0.0).answer(question)
    kinds_offered = {c["kind"] for c in result.grounding.candidates}
    assert kinds_offered <= {"option", "none"}, result.grounding.candidates
    assert result.answer.rsplit(" [", 1)[0] in ("Manchester Terrier", "Scotch Collie")
    # an option the documents do not name leaves the spans in play
    missing = "Which dog's ancestors include Gordon and Irish Setters: the Manchester Terrier or the Welsh Corgi?"
    result = make_pipeline(db, FakeGenerator(), coverage_min=0.0, cosine_min=0.0).answer(missing)
    assert {c["kind"] for c in result.grounding.candidates} - {"option", "none"}


def test_date_comparisons_between_two_options_follow_the_stated_years(tmp_path):
    doc = ("# Coaches\n\nJerry Glanville (born October 14, 1941) is a former American football coach.\n\n"
           "# Players\n\nKeith Bostic (born January 17, 1961) is a former American football safety.\n")
    db = build_store(tmp_path / "people.db", {"people.md": doc}, tmp_path, FakeEmbedder())
    # Neither article says "younger": the relevance check is the fake embedder's business, not this test's.
    pipeline = make_pipeline(db, FakeGenerator(), coverage_min=0.0, cosine_min=0.0)
    for question, answer in (("Who is younger, Keith Bostic or Jerry Glanville?", "Keith Bostic"),
                             ("Who is older, Keith Bostic or Jerry Glanville?", "Jerry Glanville"),
                             ("Who was born first, Keith Bostic or Jerry Glanville?", "Jerry Glanville")):
        result = pipeline.answer(question)
        assert result.answer.startswith(answer), (question, result.grounding.candidates[:3])
        assert answer.split()[0] in result.quotes[0].text  # the quote states the winner's year


def test_figures_the_question_states_are_not_answers():
    question = "In which year was the King who made the 1925 Birthday Honours born?"
    assert span_fit.repeats_question(spans.Span("3 June 1925", "date"), read(question))
    assert not span_fit.repeats_question(spans.Span("3 June 1865", "date"), read(question))
    assert {c.kind for c in span_fit.candidates("Bars close at 3 a.m. on weekdays.") if c.text.startswith("3 a.m")} == {"time"}


def test_a_role_preamble_is_not_what_is_asked():
    question = ("You are asked to act as a member of the Financial Results Conference Call and answer the "
                "question: What was the research and development expense?")
    assert asked.question_core(question) == "What was the research and development expense?"
    assert asked.question_core("How many pumps are there?") == "How many pumps are there?"
    assert asked.wanted(question) == "sentence"


def test_a_name_carrying_the_asked_noun_is_preferred():
    assert asked.head_noun("What county shares a border with Watauga?") == "county"
    assert asked.head_noun("What year did it open?") is None and asked.head_noun("What is it?") is None
    assert span_fit.names_head(spans.Span("Avery County", "name"), "county")
    assert not span_fit.names_head(spans.Span("Banner Elk", "name"), "county")


def test_a_draft_cut_mid_phrase_ends_at_its_last_content_word(power_db):
    refined = make_pipeline(power_db, FakeGenerator()).retrieve_context("How much diesel does the fuel store hold?")
    found = focus.context_sentences(refined.passages)
    text, sentence = grounded.verbatim("the fuel store holds 60,000 litres of", found)
    assert text == "The fuel store holds 60,000 litres" and text in sentence.text
    assert grounded.verbatim("60,00", found)[0] == "60,000"  # a figure cut short is completed
    assert grounded.verbatim("the", found) is None
    quantity = [c.text for c in span_fit.candidates("Use was 0.42 kilowatt-hours per cubic metre.") if c.kind == "quantity"]
    assert quantity == ["0.42 kilowatt-hours"]


def test_a_draft_copied_across_a_table_row_keeps_its_first_cell(tmp_path):
    doc = "# Costs\n\nCost | 2023 | 2022\nElectricity | 1,512 | 1,386\nChemicals | 905 | 870\n"
    db = build_store(tmp_path / "costs.db", {"costs.md": doc}, tmp_path, FakeEmbedder())
    refined = make_pipeline(db, FakeGenerator()).retrieve_context("What did electricity cost in 2023?")
    found = focus.context_sentences(refined.passages)
    assert grounded.verbatim("1,512 | 1,386", found)[0] == "1,512"


def test_how_many_questions_prefer_the_quantity_of_what_they_count():
    sentence = "The works supplies about 118,000 people through 640 kilometres of mains and two reservoirs."
    noun = asked.counted_noun("How many people does the works supply?")
    assert noun == "people" and asked.counted_noun("How much did it cost?") is None
    scored = {c.text: spans.counts(c, noun) for c in span_fit.candidates(sentence) if c.kind == "quantity"}
    assert scored["about 118,000 people"] == 1.0 and scored["640 kilometres"] == -1.0 and scored["two"] == 0.0
    # "What coagulant is used?": the sentence that says what the coagulant is defines the answer
    head = asked.head_noun("What coagulant is used?")
    for sentence, answer in (("Ferric sulphate is the coagulant.", "Ferric sulphate"),
                             ("Since 2019 the coagulant used is ferric sulphate.", "ferric sulphate")):
        defined = [c.text for c in span_fit.candidates(sentence) if span_fit.defines(c, sentence, head)]
        assert defined == [answer], defined
    # "supplies" meets "supply" and "treated" meets "treat" when words are matched by stem
    assert grounded.word_stem("supplies") == grounded.word_stem("supply")
    assert grounded.word_stem("treated") == grounded.word_stem("treat")


def test_a_quantity_question_prefers_the_measure_it_names():
    sentence = "Kansas covers 213,100 km and had 2,913,123 inhabitants in 2020; the new airport cost $41 million, 12% over budget."
    quantities = [c for c in span_fit.candidates(sentence) if c.kind == "quantity"]

    def fit(question):
        measure = asked.asked_measure(question)
        return {c.text: spans.measures(c, measure) for c in quantities}

    population = fit("What is the population of the state where Dodge City Regional Airport is located?")
    assert population["2,913,123"] == 1.0 and population["213,100 km"] == -1.0 and population["$41 million"] == -1.0
    cost = fit("What did the airport cost?")
    assert cost["$41 million"] == 1.0 and cost["12%"] == -1.0 and cost["2,913,123"] == 0.0
    assert fit("How far is the airport from Wichita?")["213,100 km"] == 1.0
    assert set(fit("How many runways does it have?").values()) == {0.0}  # counts() reads "how many X"
    # an infobox gives the area in square miles: an area, not a count nor a length
    box = "Area Ranked 15th Total 82,278 sq mi (213,100 km) Population Ranked 35th Total 2,913,123 (2017 est.)"
    areas = {c.text: c for c in span_fit.candidates(box) if c.kind == "quantity"}
    assert spans.measures(areas["82,278 sq mi"], "count") == -1.0 and spans.measures(areas["2,913,123"], "count") == 1.0
    three = next(c for c in span_fit.candidates("a park of 3,400 square miles") if c.kind == "quantity")
    assert spans.measures(three, "area") == 1.0 and spans.measures(three, "length") == -1.0


def features_of(grounding, text: str) -> dict[str, float]:
    """The features the ranker read for the candidate `text`."""
    return next(c.features for c in grounding.pool if c.text == text)


def _planned(tmp_path, doc: str, question: str, qtype: str = "multi-bridge", scope: float = 0.2):
    """The answer plan for `question` over a one-file markdown store (fake models), and the
    passages it was planned from."""
    db = build_store(tmp_path / "plan.db", {"doc.md": doc}, tmp_path, FakeEmbedder())
    refined = make_pipeline(db, FakeGenerator()).retrieve_context(question)
    return plan_answer(read(refined.question), refined.passages, qtype, scope, FakeEmbedder()), refined.passages


def test_the_second_hop_reads_the_sentence_about_the_bridge_entity(tmp_path):
    # The answer's sentence shares no content word with the question: only the first hop's
    # sentence ("Decade ... by Neil Young") leads to it, through the name it holds.
    doc = ("# Decade (album)\n\nDecade is a compilation album by the musician Neil Young, first released in 1977 "
           "as a triple album.\n\n"
           "# Sibling relationship\n\nSibling relations shape how children understand themselves. A sibling "
           "performer may compete with an older sibling for decades.\n\n"
           "# Scott Young\n\nScott Young was a journalist and novelist. He was the father of the musicians "
           "Neil Young and Astrid Young.\n")
    question = "Who is the sibling of the performer of Decade?"
    plan, passages = _planned(tmp_path, doc, question)
    assert "Neil Young" in plan.bridges
    best = max(plan.sentences, key=lambda s: s.score)
    assert "Astrid Young" in best.text
    text, grounding = choose.choose_short(FakeGenerator(), read(question), plan.focused, plan.prompt, plan.sentences,
                                            bridges=plan.bridges)
    assert text.startswith("Astrid Young"), grounding.candidates[:3]
    # One hop is enough when the first hop's sentence holds every word of the question: no bridge.
    single = "Who was the father of Astrid Young?"
    found = focus.context_sentences(passages)
    focus.score(single, found, FakeEmbedder())
    before = [s.score for s in found]
    assert hops.second_hop(read(single), found, FakeEmbedder()) == []
    assert [s.score for s in found] == before


def test_a_sentence_going_on_about_the_bridge_entity_by_pronoun_shares_its_gain(tmp_path, monkeypatch):
    # The answer's sentence names neither the entity nor the question's words: it says "she".
    doc = ("# Kiss and Tell (film)\n\nKiss and Tell is a 1945 American comedy film starring Shirley Temple "
           "as Corliss Archer.\n\n"
           "# Shirley Temple\n\nShirley Temple Black was an actress, singer and dancer from California. "
           "As an adult, she was named ambassador to Ghana and served as Chief of Protocol. "
           "Later a harbour in Ghana was named for the ambassador.\n")
    question = "What government position was held by the woman who portrayed Corliss Archer in the film Kiss and Tell?"

    def gain_of(share: float) -> float:
        with applied(DEFAULTS.with_values({"answer.hop_pronoun": share})):
            plan, _ = _planned(tmp_path / str(share), doc, question)
        assert plan.bridges[0] == "Shirley Temple"
        scores = {s.text.split()[0]: s.score for s in plan.sentences}
        return scores["As"] - scores["Later"]  # the sentence with "she" against its neighbour without

    assert gain_of(0.0) < 0.05 < gain_of(1.0)


def test_spans_of_the_first_hop_sentence_are_not_the_answer(tmp_path, monkeypatch):
    # The first hop's sentence says what the question starts from (the film and its year); the
    # answer is what the sentence about the bridge entity says.
    doc = ("# Fist Power\n\nFist Power is a Hong Kong action film released in March 1999 by Golden Harvest.\n\n"
           "# Hong Kong\n\nHong Kong Island was taken by the British in 1842 after the First Opium War.\n")
    question = "When was the country that produced Fist Power taken by the British?"
    plan, _ = _planned(tmp_path, doc, question)
    assert "Hong Kong" in plan.bridges
    first = [s for s in plan.sentences if s.first_hop]
    assert len(first) == 1 and "Fist Power" in first[0].text

    _, grounding = choose.choose_short(FakeGenerator(), read(question), plan.focused, plan.prompt, plan.sentences,
                                       bridges=plan.bridges)
    assert features_of(grounding, "March 1999")["first_hop_sentence"] == 1.0
    assert features_of(grounding, "1842")["first_hop_sentence"] == 0.0


def test_a_later_hop_s_answer_is_near_what_that_hop_asks(tmp_path):
    # "1921" stands beside the start's name ("Mary Lou Hardin"), which the first hop already
    # found; "1967" beside what the later hop asks ("make", "What a Wonderful World").
    doc = ("# Mary Lou Hardin\n\nMary Lou Hardin was a jazz pianist and the wife of Louis Daniels.\n\n"
           "Mary Lou Hardin made her first record in 1921 in Chicago.\n\n"
           "# What a Wonderful World\n\nLouis Daniels recorded the song What a Wonderful World in 1967.\n")
    question = "When did the spouse of Mary Lou Hardin make What a Wonderful World?"
    plan, _ = _planned(tmp_path, doc, question)
    assert plan.bridges == ["Louis Daniels"]
    _, grounding = choose.choose_short(FakeGenerator(), read(question), plan.focused, plan.prompt, plan.sentences,
                                       bridges=plan.bridges)
    # the start's own words do not make "1921" near the question; "1967" stands by the bridge
    later, start = features_of(grounding, "1967"), features_of(grounding, "1921")
    assert later["near_bridge"] > start["near_bridge"] and later["near_question"] >= start["near_question"]


def test_year_questions_get_the_year_and_where_questions_the_place():
    dated = next(c for c in span_fit.candidates("Restricted cash was included in other assets as of December 31, 2019.")
                 if c.kind == "date")
    assert span_fit.year_of(dated, read("In which year was restricted cash included in other assets?")).text == "2019"
    assert span_fit.year_of(dated, read("When was restricted cash included in other assets?")).text == "December 31, 2019"
    sentence = "Iron Maiden are an English heavy metal band formed in Leyton, East London, in 1975."
    placed = {c.text for c in span_fit.candidates(sentence) if span_fit.placed(c, sentence, read("Where did the band form?"))}
    assert placed == {"Leyton"}
    assert not any(span_fit.placed(c, sentence, read("Who formed the band?")) for c in span_fit.candidates(sentence))


def test_a_month_alone_is_a_month_not_a_name():
    sentence = "Scott Young (April 14, 1918 - June 12, 2005) married in May."
    found = {(c.text, c.kind) for c in span_fit.candidates(sentence)}
    assert ("Scott Young", "name") in found and ("May", "month") in found
    assert not [text for text, kind in found if kind == "name" and text in ("April", "June", "May")]
    month = next(c for c in span_fit.candidates(sentence) if c.text == "May")
    year = next(c for c in span_fit.candidates(sentence) if c.text == "April 14, 1918")
    assert asked.wanted("In what month did he marry?") == "month"
    assert span_fit.fits(month, "month") > span_fit.fits(year, "month")
    assert span_fit.fits(month, "date") < span_fit.fits(year, "date") and span_fit.fits(month, "name") < 0


@pytest.mark.parametrize("question, sign", [
    ("Who is the spouse of the director of the film?", 1), ("With whom did she record it?", 1),
    ("Which actress played the lead?", 1), ("Where did the band form?", -1),
    ("What movie stars the producer of the film?", -1), ("What is the name of the woman who founded it?", 1),
    ("What did the woman who founded it study?", -1), ("How many people live there?", 0),
    ("What government position was held by the woman who played her?", -1),
    ("What was the woman who founded it known for?", 0)])
def test_which_questions_ask_for_a_person(question, sign):
    assert read(question).wants_person == sign


@pytest.mark.models
def test_the_embedder_tells_peoples_names_from_places_and_titles():
    from longqa.models.resolve import load_embedder

    typer = kinds.typer_for(load_embedder())
    people = ["Margarethe Lindqvist", "Tomasz Wojcik", "Adebayo Okonkwo", "Hiroshi Nakamura"]
    others = ["Lake Winnipesaukee", "Harrowgate", "The Silent Harbour", "Northfield Rovers", "Baltic Sea"]
    assert all(x > 0 for x in typer.personhood(people)), typer.personhood(people)
    assert all(x < 0 for x in typer.personhood(others)), typer.personhood(others)


@pytest.mark.models
def test_who_questions_prefer_a_persons_name(tmp_path):
    from longqa.models.resolve import load_embedder

    # The town stands nearer the question's words than the director does; "who" wants the person.
    doc = ("# The Silent Harbour\n\nThe Silent Harbour is a 1952 drama film shot in Harrowgate and directed "
           "by Edmund Fairweather for the Northfield studio.\n")
    question = "Who directed The Silent Harbour?"
    plan, _ = _planned(tmp_path, doc, question, "extractive", 0.1)
    names = lambda grounding: [c["text"] for c in grounding.candidates]  # noqa: E731
    _, without = choose.choose_short(FakeGenerator(), read(question), plan.focused, plan.prompt, plan.sentences)
    text, grounding = choose.choose_short(FakeGenerator(), read(question), plan.focused, plan.prompt, plan.sentences,
                                            embedder=load_embedder())
    assert text.startswith("Edmund Fairweather"), names(grounding)[:4]
    assert names(without).index("Edmund Fairweather") > names(grounding).index("Edmund Fairweather")


def test_the_tail_of_a_name_the_question_says_is_no_bridge(tmp_path):
    # "School" is what is left of "Greenfield-Central High School" once the question's words are
    # set aside; as a bridge it would raise every sentence about any school above Indiana's.
    doc = ("# Greenfield-Central High School\n\nGreenfield-Central High School is a public high school in "
           "Greenfield, Indiana.\n\n"
           "# Other schools\n\nBaird High School is part of the Baird School District. Central Islip High "
           "School serves students in grades 9-12. Aspermont School is in Stonewall County.\n\n"
           "# Alcohol laws of Indiana\n\nIn Indiana, alcohol may be sold only during the hours 7 a.m. to "
           "3 a.m.\n")
    plan, _ = _planned(tmp_path, doc, "What time does the state where Greenfield-Central High is stop selling booze?")
    assert plan.bridges == ["Indiana"]
    best = max(plan.sentences, key=lambda s: s.score)
    assert "alcohol may be sold" in best.text


def test_a_question_about_where_a_range_ends_passes_over_its_start():
    sentence = "In Indiana, alcohol may be sold only during the hours 7 a.m. to 3 a.m. daily."
    side = lambda question: {c.text: spans.range_side(c, sentence, asked.asked_end(question))  # noqa: E731
                             for c in span_fit.candidates(sentence) if c.kind == "time"}
    assert side("What time does the state stop selling alcohol?") == {"7 a.m": -1.0, "3 a.m": 0.0}
    assert side("When do shops start selling alcohol?") == {"7 a.m": 0.0, "3 a.m": -1.0}
    assert set(side("What hours may alcohol be sold?").values()) == {0.0}


def test_the_first_hop_is_the_sentence_naming_the_described_bridge(tmp_path):
    # Both sentences name "King" and the honours; the bridge is the one the question describes:
    # "the King who made ..." is "King Albert IV", not the gazette the other sentence names.
    doc = ("# 1930 Harvest Honours\n\nThe appointments were made to celebrate the official birthday of The King, "
           "and were published in \"The Royal Gazette\" on 5 May 1930. The 1930 Harvest Honours were "
           "appointments by King Albert IV to various orders.\n\n"
           "# Albert IV\n\nAlbert IV (Albert Edmund; 9 March 1871 - 2 May 1940) reigned over Ruritania.\n\n"
           "# Gazettes\n\nAll royal honours are published in the relevant gazette.\n\n"
           # Other years' honours make "Harvest Honours" common, so "King" is the rarer name asked.
           "# Other Harvest Honours\n\n" + " ".join(f"The {year} Harvest Honours rewarded good works."
                                                 for year in range(1931, 1951)) + "\n")
    question = "In which year was the King who made the 1930 Harvest Honours born?"
    plan, _ = _planned(tmp_path, doc, question)
    assert plan.bridges and plan.bridges[0] == "Albert IV", plan.bridges
    text, grounding = choose.choose_short(FakeGenerator(), read(question), plan.focused, plan.prompt, plan.sentences,
                                            bridges=plan.bridges)
    assert text.startswith("1871"), grounding.candidates[:3]


def test_reference_marks_are_never_answers(tmp_path):
    # Encyclopedia pages printed to PDF keep their reference marks: "[163]" is no count of anything.
    from tests.ask_support import article

    sentence = "Members of the court bar sit closer at an oral argument.[163] The bar has six members.[164]"
    assert {c.text for c in span_fit.candidates(sentence)} & {"163", "164"} == set()
    assert "six members" in {c.text for c in span_fit.candidates(sentence)}
    corpus = article("Court", "The court has many members who sit in the hall.[141] Members of the court bar "
                     "get better seats at an oral argument.[163] " + "The hall seats the public as well. " * 3)
    db = build_store(tmp_path / "c.db", {"court.md": corpus}, tmp_path, FakeEmbedder())
    result = make_pipeline(db, FakeGenerator()).answer("How many members of the court bar get better seats?")
    assert "163" not in result.answer and "141" not in result.answer


def test_a_name_the_question_states_with_an_initial_is_not_the_answer(tmp_path):
    question = "Against the Wind is an album of the rock singer Robert C Seger. What was the singer's stage name?"
    assert span_fit.repeats_question(spans.Span("Robert Clark Seger", "name"), read(question))
    assert not span_fit.repeats_question(spans.Span("Bob Seger", "name"), read(question))
    assert not span_fit.repeats_question(spans.Span("Clark", "name"), read(question))  # no word of its own asked
    from tests.ask_support import article

    corpus = article("Bob Seger", "Robert Clark Seger (born May 6, 1945), known professionally as Bob Seger, "
                     "is a singer and songwriter who recorded Against the Wind.")
    db = build_store(tmp_path / "s.db", {"singers.md": corpus}, tmp_path, FakeEmbedder())
    # the relevance check is the fake embedder's business, not this test's
    result = make_pipeline(db, FakeGenerator(), coverage_min=0.0, cosine_min=0.0).answer(question)
    features = {c.text: c.features["repeats_question"] for c in result.grounding.pool}
    assert features["Robert Clark Seger"] == 1.0 and features["Bob Seger"] == 0.0
