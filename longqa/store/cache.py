"""Model outputs remembered by input: re-ingesting a document costs no model call.

Keys are sha256 of (model name, task, input) where the input is everything that shaped the
output (prompt, grammar, limits, labels). Each write is its own small autocommit statement, so a
cached answer survives even when the document it was made for is never stored.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

import sqlite_utils

from longqa.models.base import Generator
from longqa.store.db import now


def cache_key(model: str, task: str, payload: Any) -> str:
    text = json.dumps([model, task, payload], ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class LlmCache:
    """get/put over the store's `llm_cache` table. `db=None` remembers nothing (no store)."""

    def __init__(self, db: sqlite_utils.Database | None):
        self.db = db
        self.hits = 0

    def get(self, model: str, task: str, payload: Any) -> str | None:
        if self.db is None:
            return None
        row = self.db.conn.execute(
            "SELECT value FROM llm_cache WHERE key = ?", (cache_key(model, task, payload),)
        ).fetchone()
        if row is None:
            return None
        self.hits += 1
        return row[0]

    def put(self, model: str, task: str, payload: Any, value: str) -> None:
        if self.db is None:
            return
        self.db.conn.execute(
            "INSERT OR REPLACE INTO llm_cache (key, model, value, created) VALUES (?, ?, ?, ?)",
            (cache_key(model, task, payload), model, value, now()),
        )


def cached_complete(
    generator: Generator, cache: LlmCache | None, task: str, prompt: str, **options: Any
) -> str:
    """`generator.complete(prompt, **options)`, answered from the cache when seen before."""
    payload = {"prompt": prompt, **options}
    if cache is not None:
        hit = cache.get(generator.name, task, payload)
        if hit is not None:
            return hit
    text = generator.complete(prompt, **options)
    if cache is not None:
        cache.put(generator.name, task, payload, text)
    return text


def cached_json(cache: LlmCache | None, model: str, task: str, payload: Any, compute) -> Any:
    """A JSON-serialisable result of `compute()`, remembered under (model, task, payload)."""
    if cache is not None:
        hit = cache.get(model, task, payload)
        if hit is not None:
            return json.loads(hit)
    value = compute()
    if cache is not None:
        cache.put(model, task, payload, json.dumps(value))
    return value
