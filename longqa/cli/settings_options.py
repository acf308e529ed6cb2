"""`--set section.field=value` and `--settings FILE` on `ask` and `eval`: any described setting of
ask/settings.py, checked against its type (a wrong key or value is a one-line usage error, exit 2).

The file is TOML with one table per section (`[answer]` / `quote_sentences = 5`); without
`--settings`, $LONGQA_SETTINGS names it. `--set` values apply on top of the file's.
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import List, Optional

import typer

from longqa import config
from longqa.ask.settings import DEFAULTS, AskSettings, SettingsError, flatten

SetOption = typer.Option(None, "--set", metavar="SECTION.FIELD=VALUE",
                         help="Set one setting for this call (repeatable), e.g. --set answer.quote_sentences=5; "
                              "`longqa ask --explain` lists every name.")
SettingsFileOption = typer.Option(None, "--settings", metavar="FILE",
                                  help="TOML file of settings, one table per section (default $LONGQA_SETTINGS).")


def settings_from(assignments: Optional[List[str]], file: Optional[Path],
                  base: AskSettings = DEFAULTS) -> AskSettings:
    """The AskSettings of one call: `base`, then the file's values, then each `--set`."""
    file = file or config.settings_file()
    settings = base
    try:
        if file is not None:
            try:
                table = tomllib.loads(Path(file).expanduser().read_text(encoding="utf-8"))
            except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
                raise typer.BadParameter(f"{file}: {exc}", param_hint="--settings") from None
            settings = settings.with_values(flatten(table))
        pairs = {}
        for assignment in assignments or []:
            key, equals, value = assignment.partition("=")
            if not equals or not key.strip():
                raise typer.BadParameter(f"{assignment!r} is not SECTION.FIELD=VALUE", param_hint="--set")
            pairs[key.strip()] = value.strip()
        return settings.with_values(pairs)
    except SettingsError as exc:
        raise typer.BadParameter(str(exc), param_hint="--set/--settings") from None
