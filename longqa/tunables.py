"""Described tunables: a settings field that carries what it is and how its default was chosen,
so the settings objects can print themselves (`longqa ask --explain`) and list themselves (the
README's table). Imports nothing of longqa: every package's settings may use it."""

from __future__ import annotations

from dataclasses import field, fields, is_dataclass
from typing import Any


def tunable(default: Any, what: str, chosen: str, unlearned: str = "") -> Any:
    """A dataclass field with its default, what it is, how the default was chosen and, for a value
    set by hand where a learned one could stand, why it is not learned."""
    return field(default=default, metadata={"what": what, "chosen": f"{chosen}; not learned: {unlearned}" if unlearned else chosen})


def described(settings: Any, prefix: str = "") -> list[tuple[str, Any, str, str]]:
    """(name, value, what, chosen) of every field; a field holding settings is a section whose
    fields are named `section.field`."""
    rows = []
    for item in fields(settings):
        value = getattr(settings, item.name)
        if is_dataclass(value):
            rows += described(value, f"{prefix}{item.name}.")
        else:
            rows.append((prefix + item.name, value, item.metadata.get("what", ""), item.metadata.get("chosen", "")))
    return rows
