"""Edge weights from a group's points to the group's members (each point's row sums to 1).

- attention (PECAN): one forward pass per group, the members first and then the points, each
  a "* " line; a point's weights are its tokens' attention over each member's tokens
  (models/attention.py). Points attend to earlier points too, but only member spans count.
- cosine (the proxy where attention cannot be read, e.g. a server): the point's embedding
  against each member's, negative similarities as 0, normalised.
Both keep a point's `max_edges` strongest edges, renormalised.
"""

from __future__ import annotations

import numpy as np

HEADER = "Information points:\n"
SUMMARY = "Summary points:\n"


def keep_strongest(weights: np.ndarray, keep: int) -> np.ndarray:
    """Each row with all but its `keep` largest entries set to 0, renormalised to sum to 1."""
    out = np.array(weights, dtype=np.float64)
    if out.shape[1] > keep:
        cut = np.argsort(-out, axis=1)[:, keep:]
        np.put_along_axis(out, cut, 0.0, axis=1)
    sums = out.sum(axis=1, keepdims=True)
    uniform = np.full_like(out, 1.0 / max(out.shape[1], 1))
    return np.where(sums > 0, out / np.where(sums > 0, sums, 1.0), uniform)


def cosine_weights(member_vectors: np.ndarray, point_vectors: np.ndarray, keep: int) -> np.ndarray:
    similarity = np.clip(point_vectors @ member_vectors.T, 0.0, None)
    return keep_strongest(similarity, keep)


class AttentionEdges:
    """Attention edges from a local llama.cpp generator (one pass per group)."""

    def __init__(self, generator):
        from longqa.models.attention import AttentionReader  # llama.cpp: imported only when used

        self.reader = AttentionReader(generator)
        self.name = generator.name
        self.passes = 0
        self.pass_tokens = 0

    def weights(self, members: list[str], points: list[str], keep: int) -> np.ndarray:
        reader = self.reader
        head = reader.tokenize(HEADER, bos=True)
        member_tokens = [reader.tokenize(f"* {' '.join(m.split())}\n") for m in members]
        point_tokens = [reader.tokenize(f"* {p}\n") for p in points]
        summary = reader.tokenize(SUMMARY)
        room = reader.n_ctx - len(head) - len(summary) - sum(len(p) for p in point_tokens)
        member_tokens = _fit(member_tokens, room)
        sequence, spans = list(head), []
        for piece in member_tokens:
            spans.append((len(sequence), len(sequence) + len(piece)))
            sequence += piece
        sequence += summary
        first = len(sequence)
        rows = []
        for piece in point_tokens:
            rows.append((len(sequence), len(sequence) + len(piece)))
            sequence += piece
        from longqa.models.attention import span_weights

        capture = reader.capture(sequence, first)
        self.passes += 1
        self.pass_tokens += len(sequence)
        out = np.array([span_weights(capture, spans, row) for row in rows])
        return keep_strongest(out, keep)

    def close(self) -> None:
        self.reader.close()


def _fit(pieces: list[list[int]], room: int) -> list[list[int]]:
    """Cut the longest pieces first until all fit in `room` tokens (each keeps at least 8)."""
    total = sum(len(p) for p in pieces)
    if total <= room:
        return pieces
    if room < 8 * len(pieces):
        raise ValueError(f"a group of {len(pieces)} nodes cannot fit one attention pass")
    lengths = [len(p) for p in pieces]
    while sum(lengths) > room:
        longest = max(range(len(lengths)), key=lambda i: lengths[i])
        lengths[longest] = max(8, lengths[longest] - max(1, (sum(lengths) - room)))
    return [p[:n] for p, n in zip(pieces, lengths)]
