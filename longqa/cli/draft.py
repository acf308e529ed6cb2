"""The reader's draft: its reply shown dimmed on a terminal while it is written, wiped whole when
the proven answer takes its place.

A long draft wraps onto several rows (the reader's 24-token cap already passes 80 columns, and a
server's reply has no cap at all), so wiping the cursor's row alone would leave unproven text
above the answer. The draft therefore counts the rows it has taken, at the terminal's width, and
the wipe goes back up to its first row and clears from there to the end of the screen.
"""

from __future__ import annotations

import os

from rich.cells import get_character_cell_size

from longqa.cli.clock import since_start
from longqa.names import for_terminal

FALLBACK_COLUMNS = 80  # a terminal that does not say its width


class Draft:
    """A reader's reply shown dimmed on a terminal while it is written, and wiped when the proven
    answer is printed in its place (never on a pipe: what a script reads is only the answer)."""

    def __init__(self, terminal):
        self.terminal, self.first, self.shown = terminal, None, False
        self.text = ""  # what the terminal was given since the draft began (printable only)

    def show(self, piece: str) -> None:
        if self.first is None:
            self.first = since_start()
        if self.terminal is not None and piece:
            # One line of printable text: line breaks and tabs as spaces (a tab's width depends on
            # the column, which would put the row count off), other controls escaped.
            text = for_terminal(piece.replace("\n", " ").replace("\t", " "), self.terminal)
            self.terminal.write(("" if self.shown else "\x1b[2m") + text)
            self.terminal.flush()
            self.text += text
            self.shown = True

    def clear(self) -> None:
        if self.shown:
            up = rows_below_first(self.text, _columns(self.terminal))
            self.terminal.write("\x1b[0m\r" + (f"\x1b[{up}A" if up else "") + "\x1b[J")
            self.shown, self.text = False, ""


def rows_below_first(text: str, columns: int) -> int:
    """How many rows below its first the cursor is after `text` was written from column 0 of a
    terminal `columns` wide: a character that does not fit its row goes to the next (a wide one
    too, leaving a cell empty); a row filled to its last column keeps the cursor on it until the
    next character."""
    rows, column = 0, 0
    for char in text:
        width = get_character_cell_size(char)
        if width and column + width > columns:
            rows, column = rows + 1, 0
        column += width
    return rows


def _columns(terminal) -> int:
    try:
        return os.get_terminal_size(terminal.fileno()).columns or FALLBACK_COLUMNS
    except (OSError, ValueError, AttributeError):
        return FALLBACK_COLUMNS
