"""Every tunable of graph construction (ingest --graph), with its default and why."""

from __future__ import annotations

from dataclasses import dataclass, replace


@dataclass(frozen=True)
class GraphSettings:
    # A group is consecutive nodes of one level taken until their text reaches this many
    # (cl100k) tokens: about three 300-token leaves. GARLIC batches up to 8K; one attention pass
    # here holds a group and its points (models/attention.py ATTENTION_CTX = 2,048 model tokens).
    group_tokens: int = 900
    # Points of a group: its key sentences until they hold this share of the group's tokens
    # (GARLIC's first level is about 20-30 % of its input).
    point_share: float = 0.25
    # A sentence this short (in content words) is never a point: headings, list stubs.
    min_point_words: int = 4
    # Levels are added until one holds at most this many tokens (the search starts from the top
    # level, so it must fit a probe comfortably) or stops shrinking.
    top_tokens: int = 500
    max_levels: int = 6
    # Edges kept per point: the strongest ones, renormalised (weak attention is noise).
    max_edges: int = 8
    # "attention" (local llama.cpp model) or "cosine" (embedding proxy: servers, or asked for).
    edges: str = "attention"
    # "extractive" (key sentences, points.py) or "generated" (the model's bullets, generated.py).
    # The default model's bullets measured 0.55 mean faithfulness with a quarter of them at
    # >= 0.9 (bench/graph.py), so extractive is the default; `ingest -m/--llm-url` with a
    # stronger model generates (cli/ingest.py --points auto).
    points: str = "extractive"
    # Generated bullets per group: at most this many tokens per input token (the cap),
    # and a bullet is kept only when this share of its content words is in its sources; a group
    # left without bullets falls back to its key sentences.
    generated_share: float = 0.3
    min_faithfulness: float = 0.8

    def but(self, **changes) -> "GraphSettings":
        return replace(self, **changes)


DEFAULT = GraphSettings()
