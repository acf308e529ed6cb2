"""Work one question runs beside itself, on the second core: its dense search and a second FTS5 query.

Retrieval at a million leaves is a few SQLite queries and a numpy pass over the vectors' sign bits,
each 60-190 ms, one after another on one core while the other idled. SQLite and numpy release
the GIL inside their loops, so one worker thread runs some of them at the same time as the
caller. A query on the worker needs a connection of its own (a connection serialises its users):
`side_reader` opens a read-only one to the same file, once per open store.
"""

from __future__ import annotations

import sqlite3
import weakref
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor

import sqlite_utils

from longqa.store.db import database_file, file_uri

# One worker: a laptop's second core. Jobs queue in the order they were started.
_WORKER = ThreadPoolExecutor(max_workers=1, thread_name_prefix="longqa-beside")
_READERS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def beside(job: Callable, *args) -> Future:
    """`job(*args)` started on the worker thread; `.result()` gives what it returns (or raises)."""
    return _WORKER.submit(job, *args)


def side_reader(db: sqlite_utils.Database) -> sqlite3.Connection | None:
    """A read-only connection to `db`'s file for the worker thread alone, or None where a second
    connection would not see what the caller sees: an in-memory store, uncommitted writes of the
    caller's own, a file SQLite will not open read-only (the caller then runs the query itself)."""
    if db.conn.in_transaction:
        return None
    if db in _READERS:
        return _READERS[db]
    reader = None
    path = database_file(db)
    if path is not None:
        try:
            reader = sqlite3.connect(file_uri(path) + "?mode=ro", uri=True, isolation_level=None,
                                     check_same_thread=False, timeout=30)
            reader.execute("SELECT 1 FROM nodes_fts LIMIT 0")
        except sqlite3.Error:
            reader = None
    _READERS[db] = reader
    return reader
