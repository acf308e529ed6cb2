"""The prompts of `ask`: completion-shaped ones for a chooser (a base model, such as gemma-3-270m),
and the chat messages of a reader (the default, an instruction-tuned model), below.

A completion prompt is a document the model continues. Decisions are read from label-token probabilities
right after a label line ("Scope:"); free text (next queries, sub-questions, answers) is generated
under a one-line grammar. Static parts come first so the KV cache reuses them between calls.
"""

from __future__ import annotations

# -- question analysis -------------------------------------------------------------------------
# One prompt; the model continues "Scope:", then "Type:" on the same prefix.
ANALYSIS_PREFIX = """Questions asked about long documents, with labels.
Scope: local when a few sentences answer it, global when it needs a broad part of the document.
Type: extractive (a stated fact), abstractive (explain or summarise), arithmetic (a calculation), multi-bridge (one fact leads to another), multi-source (facts about several things).

Question: What was the net revenue of Orion Foods in fiscal 2021?
Scope: local
Type: extractive

Question: Summarize the main risks the company describes.
Scope: global
Type: abstractive

Question: By what percentage did operating costs rise between 2019 and 2020?
Scope: local
Type: arithmetic

Question: Who founded the label that released the band's first album?
Scope: local
Type: multi-bridge

Question: Which river is longer, the Danube or the Rhine?
Scope: local
Type: multi-source

Question: How does the proposed method deal with noisy labels?
Scope: global
Type: abstractive

Question: """

SCOPES = ("local", "global")
TYPES = ("extractive", "abstractive", "arithmetic", "multi-bridge", "multi-source")


def analysis_prompt(question: str, scope: str | None = None) -> str:
    """The analysis prompt up to the next label to read: Scope, then (given the scope) Type."""
    text = f"{ANALYSIS_PREFIX}{one_line(question)}\nScope:"
    return text if scope is None else text + f" {scope}\nType:"


# -- sufficiency during the search (GARLIC/PECAN's first turn) -------------------------------------
# The question comes BEFORE the information, and each selected node is appended at the end, so
# consecutive checks share the whole prefix in the KV cache: a step costs only the new node's
# tokens plus SUFFICIENCY_SUFFIX. Node lines start with "* " as in GARLIC's prompt.
SUFFICIENCY_HEAD = (
    "A reader checks whether the information below states the answer to the question.\n\n"
)
SUFFICIENCY_SUFFIX = "\n\nCan the question be answered from this information? Answer yes or no:"


def sufficiency_prompt(question: str, shown: list[str]) -> str:
    lines = "".join(f"\n* {one_line(text)}" for text in shown)
    return f"{SUFFICIENCY_HEAD}Question: {one_line(question)}\n\nInformation:{lines}{SUFFICIENCY_SUFFIX}"


# -- global selection over outlines -----------------------------------------------------------
def outline_prompt(outline_lines: list[str], question: str) -> str:
    listed = "\n".join(outline_lines)
    return (
        "Table of contents of the documents:\n"
        f"{listed}\n\n"
        f"Question: {one_line(question)}\n"
        "The section that answers the question is section"
    )


# -- the same decisions asked of a reader, in its own chat format --------------------------------
# An instruction-tuned reader is asked each judgement as a task in its system message, and answers
# with one word; the probabilities of the label words are read (ask/decisions.py). The system
# messages are fixed, so their states are kept as heads, as the answer prompt's is.
SCOPE_SYSTEM = (
    "You sort questions asked about long documents. Reply Local if a few sentences of one passage "
    "can answer the question (a fact, a figure, a date, a name, one definition or step). Reply Global "
    "if answering needs a broad part of a document read as a whole (a summary, the main points, a "
    "theme, an overall explanation). Reply with one word."
)
SCOPE_LABELS = {"local": "Local", "global": "Global"}


def scope_message(question: str) -> str:
    return f"Question: {one_line(question)}"


SUFFICIENCY_SYSTEM = (
    "You check whether passages from documents are enough to answer a question. Reply Yes if the "
    "passages state the answer, No if the answer is not in them. Reply with one word."
)
SUFFICIENCY_LABELS = {"yes": "Yes", "no": "No"}


def sufficiency_message(question: str, shown: list[str]) -> str:
    """The question first, then the passages read so far, one per line."""
    lines = "".join(f"\n* {one_line(text)}" for text in shown)
    return f"Question: {one_line(question)}\n\nPassages:{lines}\n\nDo these passages state the answer?"


OUTLINE_SYSTEM = (
    "You find where documents answer a question. Given their table of contents, with a letter per "
    "section, reply with the letter of the one section most likely to hold the answer. Reply with "
    "the letter only."
)


def outline_message(outline_lines: list[str], question: str) -> str:
    listed = "\n".join(outline_lines)
    return f"Table of contents:\n{listed}\n\nQuestion: {one_line(question)}"


# -- step-wise reasoning (multi-bridge) -------------------------------------------------------
# A reader's next query (OkraLong's step-wise expansion, asked in its chat format): the question
# and the passages found so far; its reply is one search query for the fact still missing.
NEXT_QUERY_SYSTEM = (
    "You help search documents for the answer to a question that takes more than one step. Given "
    "the question and the passages found so far, write one short search query for the fact that "
    "is still missing, using the names the passages give (a person, place, company or work the "
    "question only describes). Reply with the query only."
)


def next_query_message(question: str, shown: list[str]) -> str:
    """The question, then the passages read so far, one per line."""
    lines = "".join(f"\n* {one_line(text)}" for text in shown)
    return f"Question: {one_line(question)}\n\nPassages found so far:{lines}\n\nSearch query for the missing fact:"


NEXT_QUERY = "Next query:"  # the label the generated line carries (queries.bridge_grammar() reads it)
BRIDGE_EXAMPLE = (
    "Context: The 1968 film Cold Harbour was directed by Lena Marsh.\n"
    "Question: In which city was the director of Cold Harbour born?\n"
    "Known: Cold Harbour was directed by Lena Marsh.\n"
    f"{NEXT_QUERY} Where was Lena Marsh born?\n\n"
)


def bridge_prompt(question: str, context: str) -> str:
    return (
        "Answering a question in steps: state what the context already shows, then the next "
        "question to look up.\n\n"
        f"{BRIDGE_EXAMPLE}Context: {context}\nQuestion: {one_line(question)}\nKnown:"
    )


# -- query splitting (multi-source) -----------------------------------------------------------
SECOND_SUB_QUESTION = "Sub-question 2:"  # the label before the second generated sub-question
SPLIT_EXAMPLE = (
    "Question: Which company had more employees in 2020, Halden Steel or Norvik Mining?\n"
    "Sub-question 1: How many employees did Halden Steel have in 2020?\n"
    f"{SECOND_SUB_QUESTION} How many employees did Norvik Mining have in 2020?\n\n"
)


def split_prompt(question: str) -> str:
    return (
        "Splitting a question into sub-questions that each need one source.\n\n"
        f"{SPLIT_EXAMPLE}Question: {one_line(question)}\nSub-question 1:"
    )


# -- the answer -------------------------------------------------------------------------------
# A base model continues whatever pattern it sees: one worked example (fictional) shows the answer
# on the "Answer:" line with its citation, and a one-line grammar keeps it there.
ANSWER_INSTRUCTION = (
    "Answers to questions about the user's documents. Each answer uses only the numbered passages "
    "given with its question, cites the passages it uses like [2], and says \"The documents do not "
    "say.\" when the passages do not contain the answer."
)
PASSAGES_HEAD = "Passages:\n"  # opens the numbered passages (the example's, then the question's)
ANSWER_EXAMPLE = (
    f"{PASSAGES_HEAD}"
    "[1] Orchard Guide > Pruning (p. 3)\n"
    "Apple trees are pruned in late winter, before the buds open, removing crossing branches first.\n\n"
    "[2] Orchard Guide > Harvest (p. 9)\n"
    "Most apple varieties are picked between August and October.\n"
    "Question: When are apple trees pruned?\n"
    "Answer: In late winter, before the buds open [1].\n\n"
)
ANSWER_GRAMMAR = "root ::= [^\\n]+\n"


def answer_prompt(question: str, context: str, long_form: bool = False) -> str:
    style = "Answer (a few sentences):" if long_form else "Answer:"
    return f"{ANSWER_INSTRUCTION}\n\n{ANSWER_EXAMPLE}{PASSAGES_HEAD}{context}\nQuestion: {one_line(question)}\n{style}"


# The focused answer prompt: a few sentences, not whole passages. Short answers are chosen among
# spans of those sentences by their log-probability after "Answer:", so the example shows a bare
# span; the fixed head is the same for every question, so its KV state is reused between asks.
SHORT_INSTRUCTION = (
    "Short answers to questions about the user's documents, copied word for word from the "
    "numbered sentences given with each question, or \"The documents do not say.\" when they "
    "do not contain the answer."
)
SHORT_EXAMPLE = (
    "Sentences:\n"
    "[1] Orchard Guide > Pruning (p. 3)\n"
    "Apple trees are pruned in late winter, before the buds open.\n"
    "[2] Orchard Guide > Harvest (p. 9)\n"
    "Most apple varieties are picked between August and October.\n"
    "Question: When are apple trees pruned?\n"
    "Answer: in late winter\n\n"
)


SHORT_HEAD = f"{SHORT_INSTRUCTION}\n\n{SHORT_EXAMPLE}Sentences:\n"


def short_answer_prompt(question: str, focused: str) -> str:
    return f"{SHORT_HEAD}{focused}\nQuestion: {one_line(question)}\nAnswer:"


# The fixed heads that open most prompts of one question: a local backend keeps their KV state
# (LlamaGenerator.keep_prefix), so each is read once per process, not once per call.
KEPT_HEADS = (ANALYSIS_PREFIX, SHORT_HEAD)


def choice_prompt(question: str, options: dict[str, str], focused: str) -> str:
    """Lettered options listed under the question; each "(B)" is scored as the continuation of
    "Answer:"."""
    listed = "\n".join(f"({letter}) {one_line(text)}" for letter, text in options.items())
    return (f"Read the sentences, then pick the option that answers the question.\n\n"
            f"Sentences:\n{focused}\nQuestion: {one_line(question)}\n{listed}\nAnswer:")


def one_line(text: str) -> str:
    """User text inside a prompt: whitespace collapsed, so it cannot fake a new label line."""
    return " ".join(text.split())


# -- the reader (a chat profile: models/profiles.py) ------------------------------------------
# An instruction-tuned reader is told what to do instead of shown a pattern. The system message is
# the same for every question, so its state is kept; the user message holds the numbered passages
# (the focused sentences under their passage headers) and the question. Its reply is parsed and
# proven word for word by ask/answer/reader.py.
READER_SYSTEM = (
    "You answer questions about the user's documents using only the numbered passages given with "
    "each question.\n"
    "- For a question asking for a fact (a number, date, name, term, value or short phrase), reply "
    "with the shortest exact answer copied word for word from one passage, then that passage's "
    "number in brackets, like: 45 seconds [3]\n"
    "- For a yes/no question, reply Yes or No, then the number of the passage that decides it, "
    "like: No [2]\n"
    "- For a question with lettered options, reply with the letter of the right option, like: (B)\n"
    "- If the passages do not contain the answer, reply: unknown\n"
    "Reply with nothing else."
)
READER_UNKNOWN = "unknown"


def reader_message(question: str, passages: str, options: dict[str, str] | None = None) -> str:
    """The reader's user message: the passages, the question and any lettered options."""
    listed = "".join(f"\n({letter}) {one_line(text)}" for letter, text in (options or {}).items())
    return f"Passages:\n{passages}\n\nQuestion: {one_line(question)}{listed}"


# The reader's other replies. A question whose answer is a verdict, or sentences of the documents
# (how, why, the steps, a summary), is asked over the same sentences numbered one by one, so the
# reader can name the sentence that decides a verdict and select the sentences that answer: what
# is shown is then always the documents' own words, quoted in document order.
READER_SELECT_SYSTEM = (
    "You answer questions about the user's documents using only the numbered sentences given with "
    "each question.\n"
    "- For a yes/no question, reply Yes or No, then the number of the sentence that decides it, "
    "like: No [12]\n"
    "- For any other question, reply with the numbers of the fewest sentences that answer it, most "
    "important first, like: [4] [7]\n"
    "- If the sentences do not contain the answer, reply: unknown\n"
    "Reply with nothing else."
)


SUMMARY_REQUEST = "Reply with the numbers of three to seven sentences that together summarise it."


def numbered_message(question: str, sentences: str, summary: bool = False) -> str:
    """The reader's user message over numbered sentences; a summary asks for several."""
    asked = f"{one_line(question)}\n{SUMMARY_REQUEST}" if summary else one_line(question)
    return f"Sentences:\n{sentences}\n\nQuestion: {asked}"


# The reader's check of its own answer: the question, the one sentence that proves the answer and
# the answer, ~80 tokens. Asked fresh rather than after all the passages: measured with the default
# reader on real documents, this check told unanswerable questions from answerable ones (AUC 0.74
# and 0.86 on two sets of documents) where "do the passages state the answer?" was at chance (0.56).
CHECK_SYSTEM = (
    "You check answers to questions about documents. Reply Yes if the sentence states the answer "
    "to the question and the answer given is that answer; otherwise reply No."
)
CHECK_LABELS = ("Yes", "No")


def check_message(question: str, evidence: str, answer: str | None) -> str:
    """The check of an answer against its sentence; of the sentence alone when the answer is the
    sentence itself (a selected sentence, a quoted passage)."""
    if answer is None:
        return (f"Question: {one_line(question)}\nSentence: {one_line(evidence)}\n\n"
                "Does the sentence answer the question? Reply Yes or No.")
    return (f"Question: {one_line(question)}\nSentence: {one_line(evidence)}\nAnswer: {one_line(answer)}\n\n"
            "Does the sentence state this answer to the question? Reply Yes or No.")


# Replies asked again once, in the same conversation. "unknown" is the reader's judgement, not yet
# the decision: its best answer is asked for, and whether it stands is decided with the other
# signals (outcome.py). A reply the documents do not hold word for word is asked to be copied.
READER_BEST_GUESS = (
    "If the passages had to answer it, what would the answer be? Reply with the shortest exact answer "
    "copied word for word from one passage and that passage's number in brackets."
)
COPY_DECIDING_SENTENCE = "Copy, word for word, the one sentence of the passages that decides it."
DECIDING_SENTENCE = "Which sentence decides it? Reply with its number only."
SELECT_BEST_GUESS = "Which sentences come closest to answering it? Reply with their numbers only."
READER_COPY_AGAIN = (
    "That is not written word for word in the passages. Reply with the answer copied exactly from "
    "one passage and its number, or: unknown"
)
