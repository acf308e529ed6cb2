"""Store builders and a pipeline maker for the `ask` tests.

Stores are real SQLite files filled by the real ingest path from generated markdown and PDF
documents; the fake models come from tests/fakes.py.
"""

from __future__ import annotations

import random
from pathlib import Path

from longqa.ingest import Ingestor
from longqa.store import open_db
from tests.fakes import FAKE_COSINE_MIN, FakeEmbedder, FakeGenerator


def make_pipeline(db, generator=None, **options):
    """A Pipeline over `db` with the fake embedder and its relevance threshold."""
    from longqa.ask import Pipeline

    options.setdefault("cosine_min", FAKE_COSINE_MIN)
    return Pipeline(db, generator if generator is not None else FakeGenerator(), FakeEmbedder(), **options)


def build_store(db_path: Path, documents: dict[str, str], tmp_path: Path, embedder=None):
    """A real store: each (file name -> markdown text) written to disk and ingested."""
    db = open_db(db_path)
    ingestor = Ingestor(db=db, embedder=embedder or FakeEmbedder())
    for name, text in documents.items():
        path = tmp_path / name
        path.write_text(text, encoding="utf-8")
        result = ingestor.ingest(path)
        assert result.status in ("added", "updated"), result.error
    return db


def reactor_handbook() -> str:
    """A generated handbook: sections, subsections, numbers; enough text for several leaves."""
    parts = ["# Harbor Point Reactor Handbook\n"]
    topics = [
        ("Cooling System", "coolant", "The primary coolant loop moves 1,200 litres per minute of borated water."),
        ("Fuel Handling", "fuel", "Fuel assemblies are replaced every 18 months during a planned outage."),
        ("Emergency Procedures", "emergency", "The emergency diesel generators start within 10 seconds of a grid loss."),
        ("Staff Training", "training", "Every operator completes 120 hours of simulator training each year."),
    ]
    for title, word, fact in topics:
        parts.append(f"## {title}\n")
        for sub in ("Overview", "Details"):
            parts.append(f"### {title} {sub}\n")
            for i in range(3):
                parts.append(
                    f"This paragraph {i} of the {word} {sub.lower()} describes routine {word} work at the "
                    f"plant in plain words. " * 3 + (fact if sub == "Details" and i == 1 else "") + "\n"
                )
    return "\n".join(parts)


PAD = "The archive keeps this entry with its catalogue number and shelf mark for later readers. "
_FILLER = ("archive shelf ledger folio binder drawer cabinet index record volume margin column registry clerk "
           "stamp seal copy draft annex schedule exhibit page entry note file box tray label").split()


def filler(tag: str, count: int = 48) -> str:
    """Neutral padding of `count` words that no other tag's repeats: distinct paragraphs padded
    with PAD alone would share most of their word trigrams, and the context passes over repeats
    (refine.select)."""
    rng = random.Random(tag)
    return " ".join(rng.choice(_FILLER) for _ in range(count)) + "."


def article(title: str, text: str) -> str:
    # Leaves under 40 tokens join their neighbours: pad each article's paragraph past that.
    return f"# {title}\n\n{text} {PAD * 3}\n"


def films_corpus() -> str:
    """Two articles of a two-hop question plus distractors. The second hop ("Lena Marsh ...
    Tromso") shares no word with the question; distractors share some."""
    return "\n".join([
        article("Cold Harbour", "Cold Harbour is a 1968 drama film directed by Lena Marsh."),
        article("Harbour Lights", "Harbour Lights is a 1963 film about a woman who runs a harbour cafe."),
        article("Cold Spring", "Cold Spring is a village where the choir director grew up."),
        article("Lena Marsh", "Lena Marsh spent her childhood in Tromso, a small fishing port."),
        article("Grey Harbour", "Grey Harbour was directed in 1971 and filmed at a cold northern quay."),
    ])
