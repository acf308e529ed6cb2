"""The second hop inside the answer stage: sentences about the bridge entity the first hop names.

"Who maintains the pump that feeds Tank 3?" — one sentence says "Tank 3 is fed by the Harbour
Road pump"; the answer sits in a sentence that names the Harbour Road pump and few of the
question's words ("... the Harbour Road pump is serviced by Delta Mechanical"), so the question's
words alone rank it far down. Once sentences are scored against the question (focus.score):
1. the first hop is the sentence, among the best-scored ones, that names the question's rarest
   name, then holds a name carrying the noun the question describes its bridge by ("Harbour Road
   pump" for "the pump that feeds ..."), then holds its rarest words (IDF over the context's
   sentences): the name the question starts from ("Tank 3") makes a sentence the first hop, not a
   common name ("United Kingdom") or common words ("operation");
2. its bridge entities are the names it holds that the question does not say
   (bridge.bridge_entities, the rule the search's bridge step uses), leaving out the tail of a
   name the question says ("Depot" of "Harbour Road Depot");
3. the question words it leaves unsaid ("maintains") are what the second hop says;
4. every other sentence naming a bridge entity gains in_effect().answer.hop_weight x the best score x how much of
   the entity it names, more when it also holds unsaid words;
5. the sentences right after it in its paragraph that go on by pronoun ("Shirley Temple Black
   ... was an American actress" then "As an adult, she ... served as Chief of Protocol") gain
   in_effect().answer.hop_pronoun x its gain: they are about the entity too.
Nothing happens when the first hop's sentence holds all of the question's words (one hop answers
it). The entities are returned: what the answer is about, never the answer.
"""

from __future__ import annotations

import math
import re

import numpy as np

from longqa.ask.answer import focus
from longqa.ask.analysis.asked import Asked
from longqa.ask.search.bridge import bridge_entities
from longqa.ask.search.bridge import names as bridge_names
from longqa.ask.settings import in_effect
from longqa.text.words import STOPWORDS, content_terms, words



def applies(asked: Asked, qtype: str, long_form: bool) -> bool:
    """Whether a question gets the second hop: one that describes what it asks through ("the
    state whose ...", "the county in which ..."), wanting a short answer that is not yes/no and
    not a passage. On others the first hop's sentence often holds the answer itself (tune half:
    5 of 5 gains were such questions, 3 of 4 losses were not)."""
    return ((qtype == "multi-bridge" or asked.bridged) and not long_form
            and not asked.letters and asked.want not in ("sentence", "yesno"))


def second_hop(asked: Asked, found: list, embedder=None) -> list[str]:
    """Raise the scores of the sentences (focus.Sentence) that name the first hop's bridge
    entities; the entities, best first (empty when the question needs no second hop). With an
    embedder, a sentence's relevance to the second hop is also its cosine to "entity + the
    unsaid words" ("Indiana time stop selling booze" meets "alcohol may be sold ... 3 a.m.")."""
    if len(found) < 2 or in_effect().answer.hop_weight <= 0:
        return []
    top = max(s.score for s in found)
    if top <= 0:
        return []
    question = asked.core  # the names and words it starts from
    asked_terms = set(content_terms(question))
    bags = [set(content_terms(s.text)) for s in found]
    said = [set(words(s.text)) for s in found]  # every word, for naming an entity
    idf = {t: math.log(1 + len(found) / (1 + sum(1 for bag in bags if t in bag))) for t in asked_terms}
    asked_words = set(words(question))
    best = sorted(range(len(found)), key=lambda i: -found[i].score)[:in_effect().answer.hop_first]
    # The first hop names what the question starts from: of the names the question says, the rarest
    # ("Tank 3", not "United Kingdom" in "... the largest tank in the United Kingdom").
    named = {name: sum(idf.get(t, 0.0) for t in content_terms(name))
             for name, _, _ in bridge_names(question) if len(name) > 2}
    # Between sentences naming it equally, the one whose own names carry the noun the question
    # describes its bridge by ("Harbour Road pump" for "the pump that feeds Tank 3").
    heads = set(asked.described)
    first = max(best, key=lambda i: (max((w for name, w in named.items() if name in found[i].text), default=0.0),
                                     _names_head(found[i].text, heads, asked_words),
                                     sum(idf[t] for t in asked_terms & bags[i]), found[i].score))
    unsaid = asked_terms - bags[first]
    if not unsaid:  # the first hop's sentence says it all: no second hop
        return []
    entities: list[str] = []
    boosts: dict[int, float] = {}
    picked = bridge_entities(question, [found[first].text], limit=in_effect().answer.hop_pool, weights=idf)
    for entity, _ in _typed(picked, list(asked.described), embedder)[:in_effect().answer.hop_entities]:
        own = {w for w in words(entity) if w not in STOPWORDS} - asked_words
        if not own:
            continue
        if _tail_of_asked_name(entity, found[first].text, asked_words):
            continue
        entities.append(entity)
        naming = {}
        for i in range(len(found)):
            share = len(own & said[i]) / len(own)
            if i != first and share >= 0.5:  # "Hale" names "Tom Hale"
                naming[i] = share
        relevance = _relevance(f"{entity} {' '.join(sorted(unsaid))}", unsaid, naming, found, bags, embedder)
        for i, share in naming.items():
            boost = in_effect().answer.hop_weight * top * share * (1.0 + in_effect().answer.hop_unsaid * relevance[i])
            boosts[i] = max(boosts.get(i, 0.0), boost)
    for i, boost in {**boosts, **_going_on(found, boosts)}.items():
        found[i].score += boost
    if entities:  # its other spans say what the start is, not the answer (grounded.W_FIRST_HOP)
        found[first].first_hop = True
    return entities


_PRONOUN = re.compile(r"\b(?:he|she|it|they|his|her|its|their)\b", re.I)


def _going_on(found: list, boosts: dict[int, float]) -> dict[int, float]:
    """in_effect().answer.hop_pronoun x the gain of a sentence naming the entity, for each sentence straight after it
    in its paragraph with a pronoun among its first eight words (and no gain of its own)."""
    follow: dict[int, float] = {}
    for i, boost in sorted(boosts.items()):
        j = i + 1
        while (j < len(found) and found[j].leaf is found[i].leaf and j not in boosts
               and _PRONOUN.search(" ".join(found[j].text.split()[:8]))):
            follow[j] = max(follow.get(j, 0.0), in_effect().answer.hop_pronoun * boost)
            j += 1
    return follow


def _names_head(sentence: str, heads: set[str], asked: set[str]) -> bool:
    """The sentence holds a name that carries a described head noun and words of its own ("King
    George V" for "the King who ..."), not only the question's ("The King")."""
    if not heads:
        return False
    for name, _, _ in bridge_names(sentence):
        mine = {w for w in words(name) if w not in STOPWORDS}
        if mine & heads and mine - asked:
            return True
    return False


def _tail_of_asked_name(entity: str, sentence: str, asked: set[str]) -> bool:
    """The entity is one word ending a capitalised name whose first words the question says: "Depot" in
    "Harbour Road Depot" for "... Harbour Road ...", a leftover that would raise every sentence
    about any depot."""
    if len(entity.split()) > 1:  # "Harbour Road" after a table's "Site" header is a name of its own
        return False
    at = sentence.find(entity)
    before = re.search(r"([\w'’&-]+)\s+$", sentence[:at]) if at > 0 else None  # "Leeds, Yorkshire" is two
    return bool(before) and before.group(1)[:1].isupper() and before.group(1).lower() in asked


def _typed(picked: list[tuple[str, str]], heads: list[str], embedder) -> list[tuple[str, str]]:
    """The first hop's names re-ranked by what the question says its bridge is ("the state where
    ..." → Mississippi before Hinds County): cosine of each name to the described nouns, against
    in_effect().answer.hop_type x its rank by the words rule."""
    if embedder is None or not heads or len(picked) < 2 or in_effect().answer.hop_type <= 0:
        return picked
    vectors = np.asarray(embedder.embed(heads + [name for name, _ in picked]))
    fit = (vectors[len(heads):] @ vectors[:len(heads)].T).max(axis=1)
    order = sorted(range(len(picked)), key=lambda i: -(float(fit[i]) - in_effect().answer.hop_type * i))
    return [picked[i] for i in order]


def _relevance(query: str, unsaid: set[str], naming: dict[int, float], found: list, bags: list[set[str]],
               embedder) -> dict[int, float]:
    """How much each sentence naming the entity says of what the second hop asks: the share of
    the unsaid words it holds, or its cosine to the hop's query when that is higher (the
    in_effect().answer.dense_top sentences that name the entity most, when an embedder is loaded)."""
    out = {i: len(unsaid & bags[i]) / len(unsaid) for i in naming}
    if embedder is None or not naming:
        return out
    top = sorted(naming, key=lambda i: (-naming[i], -found[i].score))[:in_effect().answer.dense_top]
    vectors = focus.embedded(embedder, [query] + [found[i].text for i in top])
    for i, cosine in zip(top, vectors[1:] @ vectors[0]):
        out[i] = max(out[i], float(cosine))
    return out
