"""The completion prompt under which a model writes (or scores) a window's outline.

A base model follows a worked example better than an instruction, so the prompt shows a short
document and its outline in the markup of markup.py, then the window's paragraphs and "Outline:".
"""

from __future__ import annotations

from longqa.structure.markup import Part, anchor, render

_EXAMPLE = [
    ("Growing Coffee", [
        "Coffee grows on small evergreen shrubs that prefer the cool highlands of tropical countries. "
        "The plants need steady rain, rich soil and shade from the strongest afternoon sun.",
        "Each shrub produces white flowers that turn into red cherries after several months. Inside "
        "every cherry sit two green seeds, which are the beans that roasters later buy.",
    ]),
    ("Roasting the Beans", [
        "Roasting turns the hard green beans brown and releases the oils that carry their aroma. A "
        "light roast keeps more acidity, while a dark roast tastes bitter and smoky.",
        "Small shops often roast a few kilograms at a time in a rotating drum and cool the beans "
        "quickly with air, so that the flavour stops developing at the right moment.",
        "Roasted beans lose their aroma within weeks, which is why careful sellers print the "
        "roasting date on every bag.",
    ]),
    ("Chess Openings", [
        "A game of chess begins with the opening, when both players bring their knights and bishops "
        "into play. Good openings fight for the centre and keep the king safe.",
        "Players study famous lines such as the Sicilian Defence for years. Memorising moves helps, "
        "but understanding the plans behind them matters more in a real game.",
    ]),
]

EXAMPLE_TITLES = frozenset(title.casefold() for title, _ in _EXAMPLE)

_HEAD = (
    "Each outline below lists the paragraphs of the document above it, grouped into sections "
    "with short titles. A paragraph is written as its first and last words around <skip>; <br> "
    "separates the paragraphs of one section.\n\n"
)


def _document(paragraphs: list[str]) -> str:
    return "\n\n".join(" ".join(p.split()) for p in paragraphs)


def outline_prompt(texts: list[str], k: int) -> str:
    """Prompt ending where the window's outline begins."""
    example_text = _document([p for _, paragraphs in _EXAMPLE for p in paragraphs])
    example_outline = render([Part(1, title, [anchor(p, k) for p in paragraphs]) for title, paragraphs in _EXAMPLE])
    return (
        f"{_HEAD}Document:\n{example_text}\n\nOutline:\n{example_outline}\n\n"
        f"Document:\n{_document(texts)}\n\nOutline:\n"
    )
