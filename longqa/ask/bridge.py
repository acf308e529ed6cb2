"""The bridge entity of a multi-hop question, read from the evidence selected so far.

"Who founded the label that released Blue Lines?" — the first hop's passage says "Blue Lines was
released by Wild Bunch Records"; the second hop must look up "Wild Bunch Records", a name the
question never says. So the next query is built from what the evidence says, not re-asked:
- the evidence sentence sharing most of the question's content words is the one that answers
  the first hop;
- in it, the capitalised names (and quoted titles) that are not mostly the question's own words
  are the candidate bridge entities: the most new words first, then the longest, then the first;
- the next query is the entity plus the question's content words the evidence does NOT yet
  contain (what the second hop still has to say: "founded").
Deterministic and free; when it finds no entity the organiser may ask the model instead
(queries.next_query).
"""

from __future__ import annotations

import re

from longqa.retrieve.terms import STOPWORDS, content_terms, words

_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"“(])|\n+")
_LINK = {"of", "for", "the", "de", "la", "von", "van", "and", "&", "in", "on", "du", "del", "da"}
_NAME_WORD = re.compile(r"^[A-Z][\w'’.&-]*$")
_QUOTED = re.compile(r"[\"“]([^\"“”]{2,80})[\"”]")
# Capitalised words that open sentences or are grammar, not names.
_NOT_NAMES = STOPWORDS | {"he", "she", "it", "they", "his", "her", "its", "their", "this", "that", "these",
                          "those", "there", "in", "on", "at", "as", "after", "before", "during", "since",
                          "january", "february", "march", "april", "may", "june", "july", "august",
                          "september", "october", "november", "december"}


def names(sentence: str) -> list[str]:
    """Capitalised spans ("American Psychological Association", "Society for the Exploration of
    Psychotherapy Integration") and quoted titles, in order of appearance."""
    found: list[str] = [m.group(1).strip() for m in _QUOTED.finditer(sentence)]
    tokens = re.findall(r"[\w'’.&-]+|[^\w\s]", sentence)
    span: list[str] = []
    opens_sentence = False

    def close() -> None:
        while span and span[-1].lower() in _LINK:
            span.pop()
        while span and span[0].lower() in _NOT_NAMES:
            span.pop(0)
        # One capitalised word opening the sentence ("Several", "Despite") is grammar, not a name.
        if span and not (len(span) == 1 and opens_sentence):
            found.append(" ".join(span).strip(".,;:"))
        span.clear()

    for position, token in enumerate(tokens):
        if _NAME_WORD.match(token) and not (not span and token.lower() in _NOT_NAMES):
            if not span:
                opens_sentence = position == 0
            span.append(token)
        elif span and token.lower() in _LINK:
            span.append(token)
        else:
            close()
    close()
    return [n for n in dict.fromkeys(found) if n]


def bridge_entities(question: str, evidence: list[str], limit: int = 2) -> list[tuple[str, str]]:
    """Up to `limit` (entity, sentence) pairs: names in the evidence sentences closest to the
    question, that are not (mostly) the question's own words. Best first."""
    asked = {w for w in words(question)}
    asked_terms = set(content_terms(question))
    ranked: list[tuple] = []
    order = 0
    for text in evidence:
        for sentence in _SENTENCE.split(text):
            overlap = len(asked_terms & set(content_terms(sentence)))
            if overlap == 0:
                continue
            for name in names(sentence):
                name_words = [w for w in words(name) if w not in STOPWORDS]
                if not name_words:
                    continue
                new = sum(1 for w in name_words if w not in asked) / len(name_words)
                if new < 0.5:
                    continue
                ranked.append((overlap, new, min(len(name_words), 4), -order, name, sentence))
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
    """The entity plus the question's content words the evidence does not contain yet."""
    seen = set(content_terms(" ".join(evidence)))
    remaining = [t for t in content_terms(question) if t not in seen]
    return " ".join([entity, *remaining]).strip()
