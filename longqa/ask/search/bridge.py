"""The bridge entity of a multi-hop question, read from the evidence selected so far.

"Who founded the label that released Blue Lines?" — the first hop's passage says "Blue Lines was
released by Wild Bunch Records"; the second hop must look up "Wild Bunch Records", a name the
question never says. So the next query is built from what the evidence says, not re-asked:
- the evidence sentence sharing most of the question's content words is the one that answers
  the first hop;
- in it, the capitalised names (and quoted titles) that are not mostly the question's own words
  are the candidate bridge entities, those nearest the question's rarest words first;
- the next query is the entity plus the question's content words the evidence does NOT yet
  contain (what the second hop still has to say: "founded").
Deterministic and free; when it finds no entity the organiser may ask the model instead
(queries.next_query).
"""

from __future__ import annotations

import re

from longqa.ask.settings import in_effect
from longqa.text.spans import NAME_LINKS
from longqa.text.words import STOPWORDS, content_terms, words

_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"“(])|\n+")
_LINK = NAME_LINKS | {"and"}
_NAME_WORD = re.compile(r"^[A-Z][\w'’.&-]*$")
_QUOTED = re.compile(r"[\"“]([^\"“”]{2,80})[\"”]")
# Capitalised words that open sentences or are grammar, not names.
_NOT_NAMES = STOPWORDS | {"he", "she", "it", "they", "his", "her", "its", "their", "this", "that", "these",
                          "those", "there", "in", "on", "at", "as", "after", "before", "during", "since",
                          "january", "february", "march", "april", "may", "june", "july", "august",
                          "september", "october", "november", "december"}


def names(sentence: str, breaks: frozenset[str] = frozenset()) -> list[tuple[str, int, int]]:
    """Capitalised spans ("American Psychological Association", "Society for the Exploration of
    Psychotherapy Integration") with their first and last token positions, in order. A word of
    `breaks` (the question's own words) ends a span: in a flattened table row "State Sport Year
    ... Maryland Jousting" the question's "State" and "Sport" are not part of a name (a question
    word closing a span is kept: "American Psychological Association")."""
    tokens = re.findall(r"[\w'’.&-]+|[^\w\s]", sentence)
    found: list[tuple[str, int, int]] = []
    span: list[tuple[int, str]] = []

    def close() -> None:
        while span and span[-1][1].lower() in _LINK:
            span.pop()
        while span and span[0][1].lower() in _NOT_NAMES:
            span.pop(0)
        # One capitalised word opening the sentence ("Several", "Despite") is grammar, not a name.
        if span and not (len(span) == 1 and span[0][0] == 0):
            found.append((" ".join(t for _, t in span).strip(".,;:"), span[0][0], span[-1][0]))
        span.clear()

    for position, token in enumerate(tokens):
        following = tokens[position + 1] if position + 1 < len(tokens) else ""
        if token.lower() in breaks and _NAME_WORD.match(following):
            close()  # a question word inside a capitalised run: a table header, not a name
        elif _NAME_WORD.match(token) and not (not span and token.lower() in _NOT_NAMES):
            span.append((position, token))
        elif span and token.lower() in _LINK:
            span.append((position, token))
        else:
            close()
    close()
    for match in _QUOTED.finditer(sentence):  # quoted titles ("Inside Kung Fu"), placed by their first word
        first = len(re.findall(r"[\w'’.&-]+|[^\w\s]", sentence[: match.start()]))
        found.append((match.group(1).strip(), first, first + len(match.group(1).split())))
    seen: set[str] = set()
    return [f for f in found if f[0] and not (f[0] in seen or seen.add(f[0]))]


def bridge_entities(
    question: str, evidence: list[str], limit: int = 2, weights: dict[str, float] | None = None,
) -> list[tuple[str, str]]:
    """Up to `limit` (entity, sentence) pairs, best first: names in the evidence sentences that
    share most of the question's words, that are not (mostly) the question's own words, nearest
    to the question's rarest words in that sentence (IDF `weights`; "Maryland" right before
    "Jousting" in a list of every state's sport)."""
    asked = {w for w in words(question)}
    asked_terms = set(content_terms(question))
    ranked: list[tuple] = []
    order = 0
    for text in evidence:
        for sentence in _SENTENCE.split(text):
            overlap = len(asked_terms & set(content_terms(sentence)))
            if overlap == 0:
                continue
            tokens = [t.lower() for t in re.findall(r"[\w'’.&-]+|[^\w\s]", sentence)]
            anchors = [(i, (weights or {}).get(t, 1.0)) for i, t in enumerate(tokens) if t in asked_terms]
            for name, first, last in names(sentence, frozenset(asked_terms)):
                name_words = [w for w in words(name) if w not in STOPWORDS]
                if not name_words:
                    continue
                new = sum(1 for w in name_words if w not in asked) / len(name_words)
                if new < in_effect().search.bridge_new_share:
                    continue
                near = max((w / (1 + max(first - i, i - last, 0)) for i, w in anchors), default=0.0)
                ranked.append((overlap, round(near, 6), new, min(len(name_words), 4), -order, name, sentence))
                order += 1
    ranked.sort(reverse=True)
    picked: list[tuple[str, str]] = []
    for *_, name, sentence in ranked:
        if name.lower() not in {p[0].lower() for p in picked}:
            picked.append((name, sentence))
        if len(picked) >= limit:
            break
    return picked




def bridge_query(question: str, entity: str, evidence: list[str]) -> str:
    """The entity plus the question's content words the evidence does not contain yet (at most
    in_effect().expansion.bridge_question_words of them, those nearest the end of the question: in "the war that Italy
    entered when?" the last hop is asked last)."""
    seen = set(content_terms(" ".join(evidence))) | set(content_terms(entity))
    remaining = [t for t in content_terms(question) if t not in seen]
    return " ".join([entity, *remaining[-in_effect().expansion.bridge_question_words:]]).strip()


def naming(hits: dict[int, float], nodes: dict, entity: str, question: str) -> dict[int, float]:
    """The hits whose own text contains a word of `entity` that the question does not say (a
    leaf's path repeats its document's title, so a match through the title alone is no match)."""
    new = {w for w in words(entity) if w not in STOPWORDS} - set(words(question))
    if not new:
        return {}
    kept = {}
    for leaf_id, score in hits.items():
        node = nodes.get(leaf_id)
        if node is not None and new & set(words(node.text)):
            kept[leaf_id] = score
    return kept
