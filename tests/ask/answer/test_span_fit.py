"""Where a candidate span's kind stands for the kind of answer a question wants: the spans come from
real sentences of an ordinary handbook, read by the span extractor the answer stage uses."""

from __future__ import annotations

import pytest

from longqa.ask.answer import span_fit

SENTENCE = ("The fuel store holds 60,000 litres of diesel, enough for about 52 hours, and is refilled "
            "every month by Harbour Fuels; it was last inspected on 12 March 2024.")


def span(text: str):
    found = {s.text: s for s in span_fit.candidates(SENTENCE)}
    assert text in found, sorted(found)
    return found[text]


@pytest.mark.parametrize(("text", "want", "where"), [
    ("about 52 hours", "duration", span_fit.FIT),  # a quantity with a unit of time
    ("60,000 litres", "duration", span_fit.NEAR),  # a figure, but not of time
    ("about 52 hours", "quantity", span_fit.FIT),
    ("12 March 2024", "date", span_fit.FIT),
    ("12 March 2024", "month", span_fit.NEAR),  # says the month, and more
    ("60,000 litres", "date", span_fit.UNLIKELY),
    ("Harbour Fuels", "name", span_fit.FIT),
    ("Harbour Fuels", "date", span_fit.CLASH),
    ("60,000 litres", "any", span_fit.UNLIKELY),  # "which supplier": a thing, rarely a figure
    ("Harbour Fuels", "any", span_fit.NEUTRAL),
    ("Harbour Fuels", "yesno", span_fit.NEUTRAL),
])
def test_a_spans_standing_for_the_kind_asked(text, want, where):
    assert span_fit.standing(span(text), want) == where


def test_fitting_outweighs_near_outweighs_unlikely_outweighs_clashing():
    ranked = [span_fit.fits(span(text), want) for text, want in
              (("about 52 hours", "duration"), ("60,000 litres", "duration"),
               ("60,000 litres", "date"), ("Harbour Fuels", "date"))]
    assert ranked == sorted(ranked, reverse=True) and len(set(ranked)) == 4
    assert span_fit.fits(span("Harbour Fuels"), "yesno") == 0.0
