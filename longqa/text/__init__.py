"""The bottom floor: words, sentences and stems of plain text, shared by every package above."""
