"""Table rules (ask/tables.py) on tables as the parsers write them: one line per row, cells
separated by " | ". The tables are copied from the filings of the UDA evaluation documents
(Lifeway Foods 2019, Inpixon 2019, Viavi Solutions 2019, Goldman Sachs 2016), with their parsing
quirks ("$93,662 $ | 103,350", a "$" left in the next cell); the caption lines above them are
written for these tests. The context is built the way the answer
stage builds it: passages of real nodes, split into sentences by the real splitter."""

from __future__ import annotations

import pytest

from longqa.ask.analysis.asked import read
from longqa.ask.answer import focus
from longqa.ask.answer import tables
from longqa.ask.context import Passage
from longqa.tree_types import Node

VIAVI_FEES = """The following table sets forth the aggregate fees billed to us by PwC:
Fiscal 2019 | Fiscal 2018
Audit Fees (1) | $3,631,575 | $3,784,488
Audit-Related Fees (2) | 0 | 359,000
Tax Fees (3) | 169,776 | 61,592
Total | $3,805,851 | $4,208,680"""

INPIXON_FEES = """The following table presents fees for professional audit services rendered by Marcum:
2019 | 2018
Audit Fees(1) | $399,382 $ | 499,850
Audit Related Fees | $-- $ | --
Tax Fees | $-- $ | --"""

LIFEWAY_OPERATIONS = """The following table presents certain information concerning our financial results:
December 31, | Change
2019 | 2018 | $%
Net sales | $93,662 $ | 103,350 $ | (9,688 ) | (9.4%)
Cost of goods sold | $68,367 $ | 74,646 $ | 6,279 | –
Gross Profit % to net sales | 23.6% | 25.0%
Selling expenses | $11,062 $ | 13,477 $ | 2,415 | 17.9%
Selling expenses % to net sales | 11.8% | 13.0%
Goodwill and intangible asset impairment | – | 1,244 | 1,244 | 100.0%"""

LIFEWAY_CATEGORIES = """Net sales of products by category were as follows for the years ended December 31:
2019 | 2018
In thousands | $% | $%
Drinkable Kefir other than ProBugs | $71,822 | 77% $ | 78,523 | 76%
Cheese | 11,459 | 12% | 11,486 | 11%
Cream and other | 4,228 | 4% | 5,276 | 5%
Net Sales | $93,662 | 100% $ | 103,350 | 100%"""

LIFEWAY_USEFUL_LIVES = """Property and equipment is depreciated over the following estimated useful lives:
Asset | Useful Life
Buildings and improvements | 31 and 39 years
Vehicles | 5 years"""

LIFEWAY_PROPERTY = """Property and equipment consist of the following at December 31:
2019 | 2018
Land | $1,565 $ | 1,747
Buildings and improvements | 17,332 | 17,520
Vehicles | 778 | 937"""

GS_LOANS = """The table below presents details about loans receivable.
$ in millions | 2016 | 2015
Corporate loans | $24,837 | $20,740
Loans backed by commercial real estate | 4,761 | 5,271
Loans backed by residential real estate | 3,865 | 2,316
Total loans receivable, gross | 50,181 | 45,821
Allowance for loan losses | (509) | (414)"""

INPIXON_CASH = """(in thousands) | 2019 | 2018
Cash and cash equivalents | $4,777 $ | 1,008
Restricted cash | 72 | 70"""

GS_PRICES = """The table below presents the high and low sales prices per common share.
2016 | 2015 | 2014
High | Low | High | Low | High | Low
First quarter | $177.50 $139.05 $195.73 $172.26 $181.13 $159.77
Second quarter | 168.90 | 138.20 | 218.77 | 186.96 | 171.08 | 151.65"""


def context(*tables_with_scores: tuple[str, float]) -> list[focus.Sentence]:
    """The sentences of one passage per table, in context order; each passage has its retrieval score."""
    passages = []
    for n, (text, score) in enumerate(tables_with_scores, 1):
        leaf = Node("paragraph", text=text, id=n, doc_id=n)
        passages.append(Passage(n, n, n, f"Annual report {n}", f"report{n}.pdf", "Notes", 1, 1, score, text,
                                len(text.split()), [n], node=leaf))
    return focus.context_sentences(passages)


def answer(question: str, *tables_with_scores: tuple[str, float]) -> tables.Computed | None:
    return tables.compute(read(question).arithmetic, context(*tables_with_scores))


def test_the_row_comes_from_the_passage_retrieval_ranked_best():
    question = "How much were Audit fees in 2019?"
    found = answer(question, (INPIXON_FEES, 0.80), (VIAVI_FEES, 0.90))
    assert found.text == "$3,631,575" and found.row.passage.n == 2
    assert answer(question, (INPIXON_FEES, 0.95), (VIAVI_FEES, 0.90)).text == "$399,382"
    # the quotes are the header and the row, verbatim
    assert [s.text for s in found.sources] == ["Fiscal 2019 | Fiscal 2018", "Audit Fees (1) | $3,631,575 | $3,784,488"]


@pytest.mark.parametrize("question, expected, operation", [
    ("What is the average total net sales for both 2018 and 2019?", "98,506", "mean"),
    ("What is the total selling expenses altogether for years ended December 31, 2018 and 2019?", "24,539", "sum"),
    ("What is the change in net sales between 2018 and 2019?", "-9,688", "change"),
    ("What was the Selling expenses in 2019 and 2018 respectively?", "$11,062; 13,477", "list"),
])
def test_columns_the_header_names_after_its_years_are_left_aside(question, expected, operation):
    found = answer(question, (LIFEWAY_OPERATIONS, 0.9))
    assert (found.text, found.operation) == (expected, operation)
    assert found.header.text == "2019 | 2018 | $%"


def test_an_empty_cell_is_not_a_figure():
    assert answer("What is the average goodwill and intangible asset impairment for 2018 and 2019?",
                  (LIFEWAY_OPERATIONS, 0.9)) is None


def test_a_group_of_cells_per_year_gives_the_amount_or_the_percentage_asked_for():
    found = answer("What is net sales from cheese in 2018 and 2019 respectively?", (LIFEWAY_CATEGORIES, 0.9))
    assert found.text == "11,486; 11,459"  # "net sales" is the caption's: the row is "Cheese"
    found = answer("What is the percentage of net sales from Cheese in 2018 and 2019 respectively?",
                   (LIFEWAY_CATEGORIES, 0.9))
    assert found.text == "11%; 12%"


def test_a_difference_between_two_rows_of_one_column():
    found = answer("What is the difference in net sales between drinkable Kefir other than ProBugs and Cheese in 2019?",
                   (LIFEWAY_CATEGORIES, 0.9))
    assert (found.text, found.operation) == ("60,363", "difference")
    assert [s.text.split(" | ")[0] for s in found.sources] == ["2019", "Drinkable Kefir other than ProBugs", "Cheese"]
    # two columns of one row are not two rows: "low" and "high" name no row
    assert answer("In the first quarter of 2016, what is the difference between the low and high price?",
                  (GS_PRICES, 0.9)) is None


def test_a_share_of_a_total_divides_two_rows_of_one_table():
    question = "what percentage of total loans receivable gross in 2015 were loans backed by commercial real estate?"
    found = answer(question, (GS_LOANS, 0.9))
    assert (found.text, found.operation) == ("11.5%", "share")  # 5,271 / 45,821
    assert found.cells == [("Loans backed by commercial real estate", "5,271"),
                           ("Total loans receivable, gross", "45,821")]
    # the whole has no row of its own in the table: no share
    assert answer("what percentage of total deposits in 2015 were loans backed by commercial real estate?",
                  (GS_LOANS, 0.9)) is None


def test_a_row_without_a_year_header_steps_aside_for_one_that_has_one():
    question = "What is the average value of vehicles for 2018 and 2019?"
    assert answer(question, (LIFEWAY_USEFUL_LIVES, 0.95)) is None  # "5 years" is no yearly figure
    found = answer(question, (LIFEWAY_USEFUL_LIVES, 0.95), (LIFEWAY_PROPERTY, 0.85))
    assert found.text == "857.5" and found.row.text == "Vehicles | 778 | 937"


def test_a_question_word_neither_the_label_nor_the_passage_states_stops_the_rule():
    # "escrow" is nowhere in the table's passage: "Restricted cash" is not certainly the amount asked for
    assert answer("What was the amount in escrow as restricted cash at 2019 and 2018 respectively?",
                  (INPIXON_CASH, 0.9)) is None
    assert answer("What was the Cash and cash equivalents in 2019 and 2018 respectively?",
                  (INPIXON_CASH, 0.9)).text == "$4,777; 1,008"


def test_cells_in_groups_that_are_not_amount_and_percentage_are_not_read():
    # three years over "High | Low" pairs: which of the pair is meant is not for these rules to guess
    assert answer("What was the first quarter price in 2016?", (GS_PRICES, 0.9)) is None


def test_the_answer_stage_quotes_the_header_and_both_rows_verbatim(tmp_path):
    from tests.ask_support import build_store, make_pipeline
    from tests.fakes import FakeEmbedder, FakeGenerator

    doc = "# Annual Report\n\n## Net sales by category\n\n" + LIFEWAY_CATEGORIES.replace("\n", "\n\n", 1) + "\n"
    db = build_store(tmp_path / "lifeway.db", {"lifeway.md": doc}, tmp_path, FakeEmbedder())
    result = make_pipeline(db, FakeGenerator()).answer(
        "What is the difference in net sales between drinkable Kefir other than ProBugs and Cheese in 2019?")
    assert result.grounding.mode == "computed" and result.answer.startswith("60,363 [")
    assert [q.text.split(" | ")[0] for q in result.quotes] == ["2019", "Drinkable Kefir other than ProBugs", "Cheese"]
    for quote in result.quotes:
        stored = db.execute("SELECT text FROM nodes WHERE id = ?", [quote.node_id]).fetchone()[0]
        assert stored[quote.char_start:quote.char_end] == quote.text


def test_a_header_with_columns_between_its_years_is_not_read():
    # the share column has no "%" in its cells: taking the first two figures would read 45.2 as 2018's
    table = ("Revenue by segment:\n2019 | % of total | 2018 | % of total\n"
             "Net revenue | 1,200 | 45.2 | 1,100 | 44.0\nTotal | 2,655 | 100.0 | 2,500 | 100.0")
    assert answer("What is the average net revenue for 2018 and 2019?", (table, 0.9)) is None
    plain = "Revenue by segment:\nFiscal 2019 | Fiscal 2018 | Change\nNet revenue | 1,200 | 1,100 | 100"
    assert answer("What is the average net revenue for 2018 and 2019?", (plain, 0.9)).text == "1,150"


INPIXON_ESCROW = """Restricted Cash
In connection with certain transactions, the Company may be required to deposit assets in escrow accounts. As of December 31, 2019 and 2018, the Company had $72,000 and $140,000, respectively, deposited in escrow as restricted cash for the Shoom acquisition."""


def test_figures_stated_respectively_in_prose_are_read_in_the_question_order():
    asked = "What was the amount in escrow as restricted cash at 2019 and 2018 respectively?"
    found = answer(asked, (INPIXON_ESCROW, 0.9))
    assert (found.text, found.operation) == ("$72,000; $140,000", "list")
    assert [s.text for s in found.sources] == [found.row.text] and "respectively" in found.row.text
    reversed_ = answer("What was the amount in escrow as restricted cash at 2018 and 2019 respectively?",
                       (INPIXON_ESCROW, 0.9))
    assert reversed_.text == "$140,000; $72,000"
    # a sentence that does not say what the question names gives nothing
    assert answer("What was the amount in escrow as prepaid rent at 2019 and 2018 respectively?",
                  (INPIXON_ESCROW, 0.9)) is None


# ADI's 2012 annual report (a UDA document): three years, figures before the years.
ADI_RENT = """Operating leases
Total rent expense for the Company's operating leases included in the accompanying consolidated statements of operations approximated $1.6 million, $2.7 million and $2.2 million for the fiscal years ended March 31, 2012, 2011, and 2010, respectively."""


def test_a_respectively_sentence_gives_a_lookup_a_total_over_a_range_and_a_change():
    found = answer("what was total rent expense for fiscal years 2010 to 2012, in millions?", (ADI_RENT, 0.9))
    assert (found.text, found.operation) == ("$6.5 million", "sum")  # 1.6 + 2.7 + 2.2: the whole range
    assert found.cells == [("2010", "$2.2 million"), ("2011", "$2.7 million"), ("2012", "$1.6 million")]
    assert answer("What was the rent expense in 2011?", (ADI_RENT, 0.9)).text == "$2.7 million"
    assert answer("What was the change in rent expense between 2010 and 2012?", (ADI_RENT, 0.9)).text == \
        "-$0.6 million"
    # a year the sentence does not give, or a word it does not say, gives nothing
    assert answer("What was the rent expense in 2009?", (ADI_RENT, 0.9)) is None
    assert answer("What was the interest expense in 2011?", (ADI_RENT, 0.9)) is None


def test_a_respectively_sentence_with_two_lists_of_figures_is_not_read():
    two = ("Revenue and cost were $5.0 million, $4.0 million and $3.0 million, $2.0 million in 2012 and 2011, "
           "respectively.")
    assert answer("What was the revenue in 2012?", (two, 0.9)) is None


# Viavi's 2019 proxy statement (a UDA document): one block of rows per officer, the years in the rows,
# the column headings on lines of their own above.
VIAVI_MSU = """Name | Fiscal Year
Maximum
Possible Value of MSUs
Using Grant Date Fair
Value
Oleg Khaykin | 2019 | 4,067,526 | —
2018 | 2,457,750 | 909,900
Paul McNab | 2019 | 591,150 | —
2018 | 442,395 | —
2017 | 373,425 | —
Luke Scrivanich | 2019 | 591,150 | —"""


def test_a_block_per_person_with_the_years_in_the_rows_gives_the_named_row_for_the_year():
    asked = "What was the maximum possible value of MSU's using grant date fair value for Paul McNab in {}?"
    found = answer(asked.format(2019), (VIAVI_MSU, 0.9))
    assert (found.text, found.operation) == ("591,150", "lookup")
    assert found.row.text == "Paul McNab | 2019 | 591,150 | —"
    assert answer(asked.format(2017), (VIAVI_MSU, 0.9)).text == "373,425"  # a row of McNab's block
    # two figures in the row (MSUs and PSUs): which one is meant is not certain
    assert answer("What was the maximum possible value of MSUs for Oleg Khaykin in 2018?", (VIAVI_MSU, 0.9)) is None
    # a word no heading of the table says: not this table's figure
    assert answer("What was the sign-on bonus of Paul McNab in 2019?", (VIAVI_MSU, 0.9)) is None
