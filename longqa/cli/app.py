"""The Typer app and the options every command shares."""

from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path
from typing import Any, Optional

import typer
from rich.console import Console

from longqa import config
from longqa.store import open_db

app = typer.Typer(
    name="longqa",
    help="Answer questions about long local documents with a small local model.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)
inspect_app = typer.Typer(help="Look inside the store: documents, trees, nodes.", no_args_is_help=True)
app.add_typer(inspect_app, name="inspect")

_LONE_SURROGATE = re.compile("[\ud800-\udfff]")

DbOption = typer.Option(None, "-d", "--db", help="SQLite store (default: $LONGQA_DB or the data directory).")
JsonOption = typer.Option(False, "--json", help="Print one JSON document on stdout and nothing else.")


def db_from(path: Optional[Path], *, readonly: bool = False, create: bool = True):
    """The store named by -d/--db (or the default). Commands that only read pass `readonly`: they
    never create, convert or migrate a store, and work where the user may not write. Commands
    that change documents but add none (`rm`, `reindex`) pass `create=False`."""
    return open_db(config.db_path(path), readonly=readonly, create=create)


def _no_color() -> bool:
    return bool(os.environ.get("NO_COLOR"))


# Piped or redirected output has no width to fit: tables keep whole titles and paths on one line.
UNBOUNDED_WIDTH = 100_000


def console_out() -> Console:
    width = None if sys.stdout.isatty() else UNBOUNDED_WIDTH
    return Console(no_color=_no_color(), highlight=False, soft_wrap=False, width=width)


def console_err() -> Console:
    width = None if sys.stderr.isatty() else UNBOUNDED_WIDTH  # `--explain`'s tables, as stdout's
    return Console(stderr=True, no_color=_no_color(), highlight=False, soft_wrap=True, width=width)


def print_json(data: Any) -> None:
    """One JSON document on stdout, always valid UTF-8 (a stray lone surrogate becomes U+FFFD)."""
    text = json.dumps(data, ensure_ascii=False, indent=2) + "\n"
    sys.stdout.write(_LONE_SURROGATE.sub("\ufffd", text))


def interactive() -> bool:
    """Progress bars and spinners only when stderr is a terminal."""
    return sys.stderr.isatty()
