"""The `longqa` command: a thin Typer layer. Each command group lives in its own module."""

from __future__ import annotations

import contextlib
import importlib
import sys

import typer

from longqa import environment
from longqa.errors import EXIT_ERROR, EXIT_OK, EXIT_USAGE, LongqaError
from longqa.cli.app import app
from longqa.names import shown

# Click's exceptions, wherever this Typer takes click from (recent Typers carry their own copy).
_click = importlib.import_module(typer.BadParameter.__module__)
_NO_ARGS = getattr(_click, "NoArgsIsHelpError", ())
_ABORTS = tuple({typer.Abort, getattr(_click, "Abort", typer.Abort)})

# Importing a command module registers its commands on `app`. Only the module of the command
# being run is imported (`ask` pays for none of ingest's or eval's imports); help, a bad command
# name and anything else import them all, in this order (the order `--help` lists them).
MODULES = ("ingest", "inspect", "inspect_graph", "models", "ask", "eval")
COMMAND_MODULES = {
    "ingest": ("ingest",), "inspect": ("inspect", "inspect_graph"), "rm": ("inspect",),
    "models": ("models",), "reindex": ("models",), "ask": ("ask",), "eval": ("eval",),
}


def register(argv: list[str]) -> None:
    """Import the command modules that the command line `argv` (without the program) needs."""
    command = next((arg for arg in argv if not arg.startswith("-")), None)
    for name in COMMAND_MODULES.get(command, MODULES):
        importlib.import_module(f"longqa.cli.{name}")


def main() -> None:
    """Entry point: run the app, turning every failure into one line on stderr and an exit code.

    Click runs in non-standalone mode so that its usage errors come back here and are printed as
    one line (click's own block is three); commands end with `typer.Exit(code)` or a return value.
    """
    register(sys.argv[1:])
    try:
        code = app(standalone_mode=False, prog_name="longqa")
    except _NO_ARGS as exc:  # `longqa` alone: the help text, as before
        exc.show()
        code = exc.exit_code
    except _click.UsageError as exc:
        print(f"longqa: usage: {usage_line(exc)}", file=sys.stderr)
        code = EXIT_USAGE
    except _click.ClickException as exc:
        print(f"longqa: error: {shown(exc.format_message())}", file=sys.stderr)
        code = exc.exit_code
    except BrokenPipeError:  # stdout's reader has gone (`longqa ask ... | head -1`): done, quietly
        _output_closed()
        code = EXIT_OK
    except SystemExit as exc:
        # Click turns a closed pipe into exit 1 without a word; the reader having read what it
        # wanted is no failure, so that alone (the pipe found closed) ends with 0.
        if exc.code != EXIT_ERROR or not _reader_gone():
            raise
        _output_closed()
        code = EXIT_OK
    except (KeyboardInterrupt, *_ABORTS):
        code = 130
    except LongqaError as exc:
        print(f"longqa: error: {shown(exc)}", file=sys.stderr)
        code = exc.exit_code
    except Exception as exc:  # a bug: still one line, unless the user asks for the traceback
        if environment.debug():
            raise
        print(f"longqa: internal error: {type(exc).__name__}: {shown(exc)} (set LONGQA_DEBUG=1 for details)",
              file=sys.stderr)
        code = EXIT_ERROR
    if code == 130:  # typer turns Ctrl-C into exit code 130
        print("longqa: interrupted", file=sys.stderr)
    try:  # what is still buffered goes now, while a closed pipe can still be met quietly
        sys.stdout.flush()
    except BrokenPipeError:
        _output_closed()
    except OSError as exc:  # a full disk under a redirected stdout, say
        print(f"longqa: error: cannot write the output ({exc.strerror or exc})", file=sys.stderr)
        _output_closed()
        code = EXIT_ERROR
    except ValueError:  # stdout already closed by the caller
        pass
    sys.exit(code if isinstance(code, int) else EXIT_OK)


def _reader_gone() -> bool:
    """Whether stdout is a pipe whose reader has closed it (poll reports an error on it)."""
    import select

    try:
        poller = select.poll()
        poller.register(sys.__stdout__.fileno(), select.POLLOUT)
        return any(events & select.POLLERR for _, events in poller.poll(0))
    except (OSError, ValueError, AttributeError):
        return False


def _output_closed() -> None:
    """Point stdout at /dev/null: what is still buffered for the closed pipe would otherwise fail
    again when the interpreter flushes it on exit, with a message on stderr."""
    import os

    with contextlib.suppress(OSError, ValueError):
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, sys.stdout.fileno())
        os.close(null)


def usage_line(exc) -> str:
    """Click's message on one line, with where to find help (and, for `ask`, how to pass a question
    that starts with '-')."""
    message = " ".join(exc.format_message().split())
    command = exc.ctx.command_path if exc.ctx is not None else "longqa"
    hint = f"see `{command} --help`"
    if isinstance(exc, _click.NoSuchOption) and exc.ctx is not None and exc.ctx.command.name == "ask":
        hint = "a question that starts with '-' goes after `--`: longqa ask -- \"-question\"; " + hint
    return f"{shown(message)} ({hint})"


__all__ = ["app", "main", "typer"]
