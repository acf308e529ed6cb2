"""The short answer: candidates generated broadly, read by named features, ranked by learned weights.

1. Candidates: every span of the best focused sentences (candidates.py), the model's draft where it
   stands word for word in a sentence, a labelled field's value, the options a question offers, Yes
   and No for a question that opens with an auxiliary verb, and "The documents do not say.".
2. Features (features.py), the prior stage of the ranker (ranker.py) keeps a shortlist, the model
   scores the shortlist as continuations of the focused prompt, the final stage ranks it.
3. The winner is the answer and its sentence the quote; its calibrated probability is the answer's
   confidence, and the next candidates are its alternatives.
So the answer can never hold a number or a name the documents do not contain, and `--explain`
shows what each feature added to each candidate.
"""

from __future__ import annotations

from pathlib import Path

from longqa.ask.analysis.asked import Asked
from longqa.ask.answer import features, fields, grounded, reader, tables
from longqa.ask.answer import ranker as ranking
from longqa.ask.answer.candidates import Candidate, pooled, spans_of
from longqa.ask.answer.focus import TYPED, Sentence
from longqa.ask.answer.grounded import NO_ANSWER, Grounding, quote_of
from longqa.ask.settings import in_effect
from longqa.models import profiles
from longqa.text.words import overlap


def choose_short(generator, asked: Asked, focused: list[Sentence], prompt: str,
                 context: list[Sentence] | None = None, bridges: list[str] = (), embedder=None,
                 ranker: ranking.Ranker | None = None, on_draft=None) -> tuple[str, Grounding]:
    """The answer line ("about 52 hours [1]") and its grounding for a short-answer question:
    lettered options by the model, a figure computed over a table row when the rules are sure, a
    whole sentence when the question asks for a passage, else the ranked candidates' best.
    `bridges`: entities a multi-hop search went through, which the answer is about but never is."""
    context = context or focused
    if asked.letters:
        return grounded.choose_letter(generator, asked.question, asked.letters, focused, prompt)
    computed = tables.compute(asked.arithmetic, context)
    if computed is not None:
        return grounded.computed_answer(computed, focused)
    if asked.want == "sentence" and focused:
        return grounded.choose_sentence(generator, asked.question, focused, prompt)
    if profiles.is_reader(generator):
        def fallback(draft: str, model: bool) -> tuple[str, Grounding]:
            return ranked_answer(generator, asked, focused, prompt, context, bridges, embedder, ranker,
                                 draft=draft, model=model)

        return reader.answer(generator, asked, focused, context, prompt, fallback, on_draft)
    return ranked_answer(generator, asked, focused, prompt, context, bridges, embedder, ranker)


def ranked_answer(generator, asked: Asked, focused: list[Sentence], prompt: str, context: list[Sentence],
                  bridges, embedder, ranker: ranking.Ranker | None, *, draft: str | None = None,
                  model: bool = True) -> tuple[str, Grounding]:
    """The ranked candidates' best (see the module's docstring). `draft`: the model's own answer
    when the caller has it (a reader's reply), else the model writes one; `model` False ranks the
    shortlist without the model's scores (cheap: for the alternatives of a reader's proven answer)."""
    settings = in_effect().answer
    ranker = ranker or ranking.load(Path(settings.ranker_weights) if settings.ranker_weights else ranking.WEIGHTS_FILE)
    ranked = sorted(focused, key=lambda s: -s.score)[:settings.candidate_sentences]
    if draft is None:
        draft = "" if asked.want == "yesno" else grounded.draft_answer(
            generator, prompt, settings.draft_tokens_typed if asked.want in TYPED else settings.draft_tokens)
    ev = features.Evidence(asked, ranked, context, draft, list(bridges))
    pool = offered(ev)
    features.read_embeddings(pool, ev, embedder)
    features.compute(pool, ev)
    shortlist = ranker.shortlist(pool, settings.max_candidates)
    if model:
        ev.model = dict(zip((c.text for c in shortlist),
                            grounded.model_logprobs(generator, prompt, [c.text for c in shortlist])))
    features.compute(shortlist, ev)
    order = ranker.rank(shortlist)
    winner = order[0]
    if winner.kind == "yesno":  # quote a sentence that says what the verdict says, when one does
        winner.sentence = grounded.verdict_quote(winner.text, asked, ranked[:settings.verdict_sentences]) \
            or winner.sentence
    answers = [c for c in order if c.kind != "none" and c.sentence is not None]  # those a quote can show
    grounding = Grounding(mode={"none": "none", "yesno": "yesno"}.get(winner.kind, "span"), focused=focused,
                          draft=draft, candidates=[described(c, ranker) for c in order],
                          confidence=winner.probability, unsure=winner.probability < ranker.threshold,
                          alternatives=[c for c in answers if c is not winner][:2], ranked=answers, pool=pool)
    if winner.kind == "none" or winner.sentence is None:  # no answer is found: exit 4, `found` false
        grounding.mode = "none"
        return NO_ANSWER, grounding
    grounding.quotes = [quote_of(winner.sentence)]
    return f"{winner.text} [{winner.sentence.passage.n}]", grounding


def offered(ev: features.Evidence) -> list[Candidate]:
    """Every candidate the question and its sentences offer (see the module's docstring)."""
    asked, found = ev.asked, []
    if asked.want == "yesno":
        ev.verdict, support = grounded.verdict_rule(asked, ev.ranked[:in_effect().answer.verdict_sentences])
        top = support or (ev.ranked[0] if ev.ranked else None)
        return [Candidate(text, "yesno", top, source="yesno") for text in ("Yes", "No")] + [none()]
    options = list(asked.options) if asked.want == "option" else []
    ev.dated = grounded.by_dates(asked, options, ev.context or ev.ranked)
    named = bool(options)
    for text in options:
        support = ev.dated[text][1] if text in ev.dated else grounded.best_support(text, ev.ranked)
        found.append(Candidate(text, "option", support, source="option"))
        named = named and support is not None and overlap(text, support.text) >= 0.99
    if not named:  # the options the question offers, when sentences name each, are the only answers
        for sentence in ev.ranked:
            found += spans_of(sentence, asked)
        copied = grounded.verbatim(ev.draft, ev.ranked)
        if copied is not None:
            text, sentence = copied
            at = sentence.text.find(text)
            found.append(Candidate(text, "phrase", sentence, at, at + len(text) if at >= 0 else -1, source="draft"))
        hit = fields.match(asked, ev.context)
        if hit is not None:
            ev.field_text = hit[1].text
            found.append(Candidate(hit[1].text, hit[1].kind, hit[0].value, hit[1].start, hit[1].end, source="field"))
    return pooled(found) + [none()]


def none() -> Candidate:
    return Candidate(NO_ANSWER, "none", None, source="none")


def described(candidate: Candidate, ranker: ranking.Ranker) -> dict:
    """A candidate as `--json` and `--explain` show it: its score, probability and what each
    feature added to the final score."""
    shares = ranker.final.contributions(candidate.features)
    return {"text": candidate.text, "kind": candidate.kind, "structure": candidate.structure,
            "score": round(candidate.score, 4), "probability": round(candidate.probability, 4),
            "model": round(candidate.features.get("model_share", 0.0), 4),
            "contributions": {name: round(value, 4) for name, value in
                              sorted(shares.items(), key=lambda kv: -abs(kv[1])) if abs(value) >= 0.005}}

