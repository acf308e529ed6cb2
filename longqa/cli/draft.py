"""The reader's draft: its reply shown dimmed on a terminal while it is written."""

from __future__ import annotations

from longqa.cli.clock import since_start
from longqa.names import for_terminal


class Draft:
    """A reader's reply shown dimmed on a terminal while it is written, and wiped when the proven
    answer is printed in its place (never on a pipe: what a script reads is only the answer)."""

    def __init__(self, terminal):
        self.terminal, self.first, self.shown = terminal, None, False

    def show(self, piece: str) -> None:
        if self.first is None:
            self.first = since_start()
        if self.terminal is not None and piece:
            self.terminal.write(("" if self.shown else "\x1b[2m") + for_terminal(piece.replace("\n", " "), self.terminal))
            self.terminal.flush()
            self.shown = True

    def clear(self) -> None:
        if self.shown:
            self.terminal.write("\x1b[0m\r\x1b[K")
            self.shown = False
