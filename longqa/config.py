"""Where longqa keeps its files, and the settings that come from the environment."""

from __future__ import annotations

import os
from pathlib import Path


def data_dir() -> Path:
    """`$LONGQA_HOME`, else `$XDG_DATA_HOME/longqa`, else `~/.local/share/longqa`."""
    if os.environ.get("LONGQA_HOME"):
        return Path(os.environ["LONGQA_HOME"]).expanduser()
    xdg = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(xdg).expanduser() / "longqa"


def models_dir() -> Path:
    """Assembled and converted model files (the embedded defaults) live here:
    `$LONGQA_MODELS_DIR`, else `<data dir>/models`."""
    if os.environ.get("LONGQA_MODELS_DIR"):
        return Path(os.environ["LONGQA_MODELS_DIR"]).expanduser()
    return data_dir() / "models"


def db_path(explicit: str | os.PathLike | None = None) -> Path:
    """`-d/--db`, else `$LONGQA_DB`, else `<data dir>/longqa.db`."""
    if explicit:
        return Path(explicit).expanduser()
    if os.environ.get("LONGQA_DB"):
        return Path(os.environ["LONGQA_DB"]).expanduser()
    return data_dir() / "longqa.db"
