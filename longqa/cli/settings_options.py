"""`--set section.field=value` and `--settings FILE` on `ask` and `eval`: any described setting of
ask/settings.py, checked against its type (a wrong key or value is a one-line usage error, exit 2).

The file is TOML with one table per section (`[answer]` / `quote_sentences = 5`); without
`--settings`, $LONGQA_SETTINGS names it. `--set` values apply on top of the file's, and the
command's own options (`--confidence`, `--search`, ...) on top of those: all three are checked by
the one validation of ask/settings.py (each field's type, range and choices). The file must be a
regular file of at most MAX_SETTINGS_BYTES: a pipe or a device is refused at once, never read.
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import List, Optional

import typer

from longqa import config
from longqa.ask.settings import DEFAULTS, AskSettings, SettingsError, flatten
from longqa.models.regular_file import NotRegularFile, read_regular

MAX_SETTINGS_BYTES = 1 << 20  # the full list of settings is under 10 KB of TOML

SetOption = typer.Option(None, "--set", metavar="SECTION.FIELD=VALUE",
                         help="Set one setting for this call (repeatable), e.g. --set answer.quote_sentences=5; "
                              "`longqa ask --explain` lists every name.")
SettingsFileOption = typer.Option(None, "--settings", metavar="FILE",
                                  help="TOML file of settings, one table per section (default $LONGQA_SETTINGS).")


def settings_from(assignments: Optional[List[str]], file: Optional[Path], base: AskSettings = DEFAULTS,
                  options: Optional[dict[str, object]] = None) -> AskSettings:
    """The AskSettings of one call: `base`, then the file's values, then each `--set`, then the
    `section.field` values of the command's own options that were given (None: not given)."""
    file = file or config.settings_file()
    settings = base
    try:
        if file is not None:
            settings = settings.with_values(flatten(_read_table(Path(file).expanduser())))
        pairs = {}
        for assignment in assignments or []:
            key, equals, value = assignment.partition("=")
            if not equals or not key.strip():
                raise typer.BadParameter(f"{assignment!r} is not SECTION.FIELD=VALUE", param_hint="--set")
            pairs[key.strip()] = value.strip()
        settings = settings.with_values(pairs)
    except SettingsError as exc:
        raise typer.BadParameter(str(exc), param_hint="--set/--settings") from None
    except RecursionError:  # a value of lists in lists, too deep to show
        raise typer.BadParameter("a value nested too deeply to be a setting", param_hint="--set/--settings") from None
    try:
        return settings.with_values({key: value for key, value in (options or {}).items() if value is not None})
    except SettingsError as exc:
        raise typer.BadParameter(str(exc)) from None


def _read_table(file: Path) -> dict:
    """The settings file's TOML document; a usage error naming the file and why it cannot be one."""
    try:
        text = read_regular(file, MAX_SETTINGS_BYTES).decode("utf-8")
        return tomllib.loads(text)
    except NotRegularFile as exc:
        reason = str(exc)
    except UnicodeDecodeError:
        reason = "not UTF-8 text"
    except tomllib.TOMLDecodeError as exc:
        reason = str(exc)
    except RecursionError:  # tomllib reads nested arrays and tables recursively
        reason = "nested too deeply to be a settings file"
    raise typer.BadParameter(f"{file}: {reason}", param_hint="--settings")
