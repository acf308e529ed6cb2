"""The SQLite store: one file holds documents, their trees, FTS5 text index, vectors and LLM cache."""

from longqa.store.db import open_db, snapshot, transaction

__all__ = ["open_db", "snapshot", "transaction"]
