"""Whether a name is a person's, read from its sentence-embedding, and whether a question asks for one.

"Who signed the lease for the landlord?" wants a person, yet the sentences around the answer also
name companies, towns and buildings, and every capitalised run is a "name" to text/spans.py. The
embedder places a name near others of its kind: a name's vector is compared with the centroid of
a few people's names and with the centroids of places, organisations, titles of works and other
capitalised things; the margin says how much more it looks like a person (all-MiniLM-L6-v2 sets
people apart from the rest with an AUC of 0.97 on 86 names, 35 people and 51 others, taken from
the answers and wrong candidates of dev's HotpotQA, MuSiQue and L-Eval questions). Nothing is
trained: the prototypes below are all of it, and another embedder reads them on its own scale
(the margin is divided by in_effect().answer.person_scale).
"""

from __future__ import annotations

import numpy as np

from longqa.ask.settings import in_effect


# Names written for this module, spread over languages and shapes; none is taken from the data.
PROTOTYPES = {
    "person": ["John Smith", "Maria Garcia", "Li Wei", "Fatima Khan", "Hans Müller", "Yuki Tanaka",
               "Kwame Mensah", "Olga Petrova", "Pierre Dubois", "Aisha Bello", "Robert Johnson",
               "Elizabeth Taylor"],
    "place": ["London", "Lake Geneva", "Ohio", "Mount Kenya", "Bavaria", "Osaka", "Cook County",
              "Rio de Janeiro", "the Sahara", "Kansas City", "Nile River", "Nova Scotia"],
    "organisation": ["General Motors", "the United Nations", "Oxford University", "Chelsea F.C.",
                     "the Democratic Party", "Microsoft", "the Beatles", "Red Cross", "NASA",
                     "Bank of England", "Toyota", "Harvard Law School"],
    "work": ["The Great Gatsby", "Star Wars", "Hey Jude", "Abbey Road", "Hamlet", "The Simpsons",
             "Nature", "Pride and Prejudice", "Breaking Bad", "Thriller", "Gone with the Wind",
             "The New York Times"],
    "other": ["American", "Buddhist", "Supreme Court", "National Park", "Prime Minister",
              "World War II", "Christmas", "English", "Roman Catholic", "Olympic Games", "Renaissance",
              "Internet"],
}

class PersonTyper:
    """Person-likeness of names under one embedder; the prototype centroids are embedded once."""

    def __init__(self, embedder):
        self.embedder = embedder
        self._centroids: np.ndarray | None = None

    def _prototypes(self) -> np.ndarray:
        if self._centroids is None:
            rows = []
            for names in PROTOTYPES.values():
                mean = np.asarray(self.embedder.embed(names), dtype=np.float32).mean(axis=0)
                rows.append(mean / (np.linalg.norm(mean) or 1.0))
            self._centroids = np.stack(rows)  # "person" first
        return self._centroids

    def personhood(self, names: list[str]) -> list[float]:
        """For each name, in -1..1: how much nearer it lies to people's names than to any other
        kind's centroid, in units of in_effect().answer.person_scale, clipped."""
        if not names:
            return []
        vectors = np.asarray(self.embedder.embed(names), dtype=np.float32)
        vectors /= np.linalg.norm(vectors, axis=1, keepdims=True).clip(min=1e-9)
        cosines = vectors @ self._prototypes().T
        margins = cosines[:, 0] - cosines[:, 1:].max(axis=1)
        return [float(x) for x in np.clip(margins / in_effect().answer.person_scale, -1.0, 1.0)]


_TYPERS: dict[int, PersonTyper] = {}


def typer_for(embedder) -> PersonTyper | None:
    """One PersonTyper per embedder in the process (its centroids are reused across questions)."""
    if embedder is None:
        return None
    key = id(embedder)
    if key not in _TYPERS or _TYPERS[key].embedder is not embedder:
        _TYPERS[key] = PersonTyper(embedder)
    return _TYPERS[key]
