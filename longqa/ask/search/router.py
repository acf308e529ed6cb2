"""RDR2's router: the model reads the part of the tree the search sees and makes one move.

The routing state (RDR2's retrieval subtree) is the nodes selected so far and the frontier nodes,
each with its ancestors, written one `id: text` line per node in document order and indented by
depth. Headings are always shown in full; a leaf the search has not opened yet is collapsed to its
first words and "…", an opened one shows more. Nodes are added in priority order (selected ones,
then the frontier best-first) until the token cap, so the best part of the state always fits.

The prompt is a document a base model continues: one worked example, the question, the tree, then
"Action:". The reply is ONE action under a GBNF grammar written for that call, listing the legal
ids, so the model cannot name a node that is not there:
    ANSWER(id, id, ...)   the listed nodes answer the question: add them and stop searching;
    EXPAND(id)            read this frontier node next;
    REFUSE                nothing shown can help: stop searching.
A reader (an instruction-tuned model) is told the same moves in its own chat format instead
(ROUTER_SYSTEM) and replies under the same grammar. Servers that ignore grammars may reply
anything: `parse` reads an action leniently (RDR2's "[EXPAND] 12: ..." form too) and returns
"none" for junk, which leaves the search as it was.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from longqa import tokens
from longqa.models import skill
from longqa.ask.settings import ROUTER_MODES as MODES
from longqa.models.base import KEEPS_PREFIX, supports
from longqa.models.chat import Message
from longqa.models.profiles import is_reader
from longqa.models.grammar import literal
from longqa.structure.tree import Node

INDENT = "  "
ELLIPSIS = "…"
REFUSE_MOVE = "REFUSE"  # the REFUSE move as the grammar spells it (after its lead)
MAX_REPLY_TOKENS = 40  # an action with a few ids; the grammar ends it well before this

# One worked example (fictional): the base model continues the pattern it is shown. The answer
# is in a collapsed node under a heading that names it, so the example move is EXPAND.
ROUTER_HEAD = (
    "A reader explores a document tree to answer a question. Each line is \"id: text\", indented "
    "by depth. Headings are shown in full; a line ending in \"…\" is collapsed (not read yet). The "
    "reader makes one move: ANSWER(ids) when the listed lines answer the question, EXPAND(id) to "
    "read a collapsed line next, REFUSE when nothing shown can help.\n\n"
    "Question: How long is the warranty on the Model K kettle?\n"
    "Tree:\n"
    "1: Model K Kettle Manual\n"
    "  2: Safety\n"
    "    3: Never fill the kettle above the…\n"
    "  4: Warranty\n"
    "    5: The Model K is covered for…\n"
    "    6: To make a claim, keep the receipt and the serial number printed under the base.\n"
    "Action: EXPAND(5)\n\n"
)

# The same task for a reader (an instruction-tuned model), in its own chat format: told, not shown.
ROUTER_SYSTEM = (
    "You explore a document's tree to find the answer to a question. Each line of the tree is "
    "\"id: text\", indented by depth. Headings are shown in full; a line ending in \"…\" is collapsed "
    "(not read yet). Make one move:\n"
    "- ANSWER(ids) when the listed lines state the answer, like: ANSWER(6, 9)\n"
    "- EXPAND(id) to read a collapsed line that may hold it, like: EXPAND(5)\n"
    "- REFUSE when nothing shown can help.\n"
    "Reply with the move only."
)


@dataclass(frozen=True)
class Action:
    kind: str  # ANSWER | EXPAND | REFUSE | none (no usable reply)
    ids: tuple[int, ...] = ()
    raw: str = ""  # the reply as generated, for the step log


NO_ACTION = Action("none")


def steering(mode: str, generator) -> float:
    """How far the router's moves steer the search: 0 = it is not asked. "auto" follows the
    model's measured router skill (skill.router_weight), "on" always follows it, "off" never."""
    if mode not in MODES:
        raise ValueError(f"router must be one of {', '.join(MODES)}, not {mode!r}")
    if generator is None or mode == "off":
        return 0.0
    return 1.0 if mode == "on" else skill.router_weight(generator)


def render(shown: list[int], opened: set[int], nodes: dict[int, Node], parent_of: dict[int, Node],
           order: dict[int, int], max_tokens: int, hidden_words: int, open_words: int) -> tuple[str, list[int]]:
    """The routing state as text, and the ids of `shown` that made it under `max_tokens`.

    `shown` is in priority order; each node brings its ancestors (headings, never collapsed). A
    leaf in `opened` shows `open_words` words, any other leaf `hidden_words` and "…"."""
    lines: dict[int, str] = {}
    used = 0
    kept: list[int] = []
    for node_id in shown:
        chain = []
        node: Node | None = nodes.get(node_id)
        while node is not None and node.id not in lines:
            chain.append(node)
            node = parent_of.get(node.id)
        new = {n.id: _line(n, n.id in opened, hidden_words, open_words) for n in chain}
        cost = sum(tokens.count(text) + 1 for text in new.values())
        if used + cost > max_tokens:
            continue  # a smaller node further down may still fit
        lines.update(new)
        used += cost
        kept.append(node_id)
    text = "\n".join(lines[i] for i in sorted(lines, key=lambda i: order.get(i, 0)))
    return text, kept


def _line(node: Node, opened: bool, hidden_words: int, open_words: int) -> str:
    if node.is_leaf:
        words = node.text.split()
        limit = open_words if opened else hidden_words
        text = " ".join(words[:limit]) + (ELLIPSIS if len(words) > limit else "")
    else:
        text = " ".join((node.title or "(untitled)").split())
    return f"{INDENT * node.depth}{node.id}: {text}"


def prompt(question: str, tree: str) -> str:
    return f"{ROUTER_HEAD}Question: {' '.join(question.split())}\nTree:\n{tree}\nAction:"


def chat_message(question: str, tree: str) -> str:
    return f"Question: {' '.join(question.split())}\n\nTree:\n{tree}"


def grammar(answer_ids: list[int], expand_ids: list[int], max_answer: int, refuse: bool = True,
            lead: str = " ") -> str:
    """GBNF for one action whose ids are only the legal ones; a move with no legal id is left out.
    `lead` opens the move: a space after a completion's "Action:", nothing at a reader's turn."""
    moves, rules = [], []
    if answer_ids and max_answer > 0:
        more = " ".join(['(", " aid)?'] * (max_answer - 1))
        moves.append(f'"{lead}ANSWER(" aid {more} ")"'.replace("  ", " "))
        rules.append("aid ::= " + " | ".join(literal(str(i)) for i in dict.fromkeys(answer_ids)))
    if expand_ids:
        moves.append(f'"{lead}EXPAND(" eid ")"')
        rules.append("eid ::= " + " | ".join(literal(str(i)) for i in dict.fromkeys(expand_ids)))
    if refuse or not moves:
        moves.append(f'"{lead}{REFUSE_MOVE}"')
    return "root ::= " + " | ".join(moves) + "\n" + "".join(rule + "\n" for rule in rules)


_MOVE = re.compile(r"\[?\b(ANSWER|EXPAND|REFUSE)\b\]?\s*(?:\(([^)\n]*)\)?|([\d ,]*))", re.IGNORECASE)


def parse(reply: str, answer_ids: list[int], expand_ids: list[int]) -> Action:
    """The first move named in `reply`, else a "none" action (kept with the reply, for the log).
    Ids not offered are dropped; an EXPAND or ANSWER left with no legal id is no action."""
    match = _MOVE.search(reply or "")
    if match is None:
        return Action("none", (), reply or "")
    kind = match.group(1).upper()
    listed = [int(n) for n in re.findall(r"\d+", match.group(2) or match.group(3) or "")]
    if kind == "REFUSE":
        return Action("REFUSE", (), reply)
    legal = answer_ids if kind == "ANSWER" else expand_ids
    ids = tuple(dict.fromkeys(i for i in listed if i in legal))
    if not ids:
        return Action("none", (), reply)
    return Action(kind, ids[:1] if kind == "EXPAND" else ids, reply)


def decide(generator, question: str, tree: str, answer_ids: list[int], expand_ids: list[int],
           max_answer: int, refuse: bool = True) -> Action:
    """Ask `generator` for one action on `tree`; the grammar holds it to the legal ids. A reader is
    asked in its chat format, a chooser continues the worked example."""
    if is_reader(generator):
        rules = grammar(answer_ids, expand_ids, max_answer, refuse, lead="")
        if supports(generator, KEEPS_PREFIX):
            generator.keep_prefix(generator.chat_head(ROUTER_SYSTEM))
        asked = generator.chat_prompt([Message("system", ROUTER_SYSTEM), Message("user", chat_message(question, tree))])
    else:
        rules = grammar(answer_ids, expand_ids, max_answer, refuse)
        if supports(generator, KEEPS_PREFIX):  # a local backend keeps the example's KV state between calls
            generator.keep_prefix(ROUTER_HEAD)
        asked = prompt(question, tree)
    reply = generator.complete(asked, max_tokens=MAX_REPLY_TOKENS, stop=["\n"], grammar=rules)
    return parse(reply, answer_ids, expand_ids)
