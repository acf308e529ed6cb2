"""The `longqa` command: a thin Typer layer. Each command group lives in its own module."""

from __future__ import annotations

import os
import sys

import typer

from longqa.errors import EXIT_ERROR, LongqaError
from longqa.cli.app import app

# Importing a command module registers its commands on `app`.
from longqa.cli import ingest as _ingest  # noqa: F401,E402
from longqa.cli import inspect as _inspect  # noqa: F401,E402
from longqa.cli import models as _models  # noqa: F401,E402
from longqa.cli import ask as _ask  # noqa: F401,E402
from longqa.cli import eval as _eval  # noqa: F401,E402


def main() -> None:
    """Entry point: run the app, turning every failure into one line on stderr and an exit code.

    Typer (click) handles usage errors itself (exit 2); commands end with `typer.Exit(code)`.
    """
    try:
        app()
    except KeyboardInterrupt:
        print("longqa: interrupted", file=sys.stderr)
        sys.exit(130)
    except LongqaError as exc:
        print(f"longqa: error: {exc}", file=sys.stderr)
        sys.exit(exc.exit_code)
    except Exception as exc:  # a bug: still one line, unless the user asks for the traceback
        if os.environ.get("LONGQA_DEBUG"):
            raise
        print(f"longqa: internal error: {type(exc).__name__}: {exc} (set LONGQA_DEBUG=1 for details)", file=sys.stderr)
        sys.exit(EXIT_ERROR)


__all__ = ["app", "main", "typer"]
