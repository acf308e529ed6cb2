"""Document text printed to a terminal cannot drive it: bidirectional overrides and control
characters in a stored quote are escaped there, and piped output keeps the exact text."""

import io
import os
import pty

from longqa.names import for_terminal

SPOOFED = "The fee is \u202e0001$\u202c per year.\nNext line\tand a tab."


def test_a_terminal_gets_bidi_overrides_and_controls_escaped_but_lines_kept():
    leader, follower = pty.openpty()
    try:
        with os.fdopen(follower, "w", closefd=False) as terminal:
            shown = for_terminal(SPOOFED + "\x1b[2J", terminal)
    finally:
        os.close(leader)
        os.close(follower)
    assert "\u202e" not in shown and "\\u202e" in shown and "\x1b" not in shown
    assert "\n" in shown and "\t" in shown


def test_piped_output_keeps_the_stored_text_exactly():
    assert for_terminal(SPOOFED, io.StringIO()) == SPOOFED
