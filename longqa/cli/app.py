"""The Typer app and the options every command shares."""

from __future__ import annotations

import errno
import json
import math
import os
import re
import sys
from pathlib import Path
from typing import Any, Optional

import typer
from rich.console import Console

from longqa import config
from longqa.names import valid_unicode
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


class _Console(Console):
    def on_broken_pipe(self) -> None:
        # rich's own handling exits 1 without a word; a reader that has read enough (`| head -1`)
        # is no failure: cli.main ends the command quietly with 0, whatever wrote to the pipe.
        raise BrokenPipeError(errno.EPIPE, "the output's reader has closed the pipe")


def console_out() -> Console:
    width = None if sys.stdout.isatty() else UNBOUNDED_WIDTH
    return _Console(no_color=_no_color(), highlight=False, soft_wrap=False, width=width)


def console_err() -> Console:
    width = None if sys.stderr.isatty() else UNBOUNDED_WIDTH  # `--explain`'s tables, as stdout's
    return _Console(stderr=True, no_color=_no_color(), highlight=False, soft_wrap=True, width=width)


def print_json(data: Any) -> None:
    """One JSON document on stdout, always valid JSON in valid UTF-8: a stray lone surrogate
    becomes U+FFFD, and a number that is not finite (NaN, ±Infinity: not JSON) becomes null, with
    a warning on stderr naming where."""
    not_finite: list[str] = []
    text = json.dumps(_finite(data, "", not_finite), ensure_ascii=False, indent=2, allow_nan=False) + "\n"
    if not_finite:
        shown = ", ".join(not_finite[:5]) + (f" and {len(not_finite) - 5} more" if len(not_finite) > 5 else "")
        sys.stderr.write(f"longqa: warning: numbers that are not finite written as null: {shown}\n")
    sys.stdout.write(valid_unicode(text))


def _finite(value: Any, where: str, not_finite: list[str]) -> Any:
    """`value` with each float that is not finite replaced by None (its place noted)."""
    if isinstance(value, float):
        if math.isfinite(value):
            return value
        not_finite.append(where or "the value")
        return None
    if isinstance(value, dict):
        return {key: _finite(item, f"{where}.{key}" if where else str(key), not_finite) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite(item, f"{where}[{n}]", not_finite) for n, item in enumerate(value)]
    return value


def interactive() -> bool:
    """Progress bars and spinners only when stderr is a terminal."""
    return sys.stderr.isatty()
