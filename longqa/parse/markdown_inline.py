"""Markdown inline syntax rendered to the text a reader sees: links keep their text, reference
links and images their label or description, emphasis and code-span marks go, backslash escapes
give their character, HTML comments vanish. Every quote is a slice of the stored text, so what is
stored must be the rendered text, not the source.

Code spans are set aside first: what a code span holds is an identifier or code, written as is
(`*args` and `snake_case_name` keep their stars and underscores).
"""

from __future__ import annotations

import re

# A link reference definition: "[label]: url" or '[label]: <url> "title"' on a line of its own.
DEFINITION = re.compile(r"^ {0,3}\[(?P<label>[^\]\n]+)\]:[ \t]*\S+(?:[ \t]+(?:\"[^\"\n]*\"|'[^'\n]*'|\([^)\n]*\)))?[ \t]*$",
                        re.MULTILINE)
COMMENT = re.compile(r"<!--.*?-->", re.DOTALL)
_CODE = re.compile(r"(?<!`)(`+)(?!`)(.+?)(?<!`)\1(?!`)", re.DOTALL)
_TEX_QUOTE = re.compile(r"``[^`\n]{1,300}?''")
_HELD = re.compile("\ue000(\\d+)\ue001")  # a code span set aside, by its number
_IMAGE = re.compile(r"!\[([^\[\]\n]*)\]\([^()\s]*(?:\s+\"[^\"]*\")?\)")
_INLINE_LINK = re.compile(r"\[([^\[\]]+)\]\(<?[^()\s<>]*(?:\([^()\s]*\))?[^()\s<>]*>?(?:\s+(?:\"[^\"]*\"|'[^']*'))?\)")
_REFERENCE_LINK = re.compile(r"\[([^\[\]]+)\]\[([^\[\]\n]*)\]")
_SHORTCUT = re.compile(r"(?<![\]\\!])\[([^\[\]\n]+)\](?![\[(:])")
_AUTOLINK = re.compile(r"<((?:https?|ftp|mailto):[^<>\s]+)>")
# Emphasis: a run of one to three marks that opens before a non-space and closes after one; "_"
# never inside a word (snake_case), "*" not against another word character either ("2*3*4").
_STARS = re.compile(r"(?<![\w*\\])(\*{1,3})(?=[^\s*])(.+?)(?<=[^\s*\\])\1(?![\w*])", re.DOTALL)
_UNDERSCORES = re.compile(r"(?<![\w_\\])(_{1,3})(?=[^\s_])(.+?)(?<=[^\s_\\])\1(?![\w_])", re.DOTALL)
_ESCAPE = re.compile(r"\\([!-/:-@\[-`{-~])")
# A list item's "*" or "+" marker: a bullet to the reader, not emphasis.
_BULLET = re.compile(r"^([ \t]*)[*+](?=[ \t])", re.MULTILINE)
# An empty anchor a page puts before a heading for its links: <a id="x"></a>.
_ANCHOR = re.compile(r"<a\s+(?:id|name)=\"[^\"]*\"\s*>\s*</a>", re.IGNORECASE)


def definitions(text: str) -> set[str]:
    """The labels of the text's link reference definitions, normalised as labels are matched."""
    return {_label(m.group("label")) for m in DEFINITION.finditer(text)}


def drop_definitions(text: str) -> str:
    """The text without its link reference definitions and HTML comments (no reader sees them)."""
    return DEFINITION.sub("", COMMENT.sub("", text))


def tex_quotes(text: str) -> bool:
    """Whether the text quotes as TeX does, ``so'' (text exported from an encyclopedia): then its
    backticks are quotation marks, not code spans, and stay as written."""
    opened = text.count("``")
    return opened > 0 and len(_TEX_QUOTE.findall(text)) >= opened / 2


def render(text: str, labels: set[str] = frozenset(), quotes: bool = False) -> str:
    """`text` as a reader sees it; a reference link ("[pending]", "[text][label]") is one only
    where one of `labels` defines it; with `quotes` (see tex_quotes) backticks are left alone."""
    held: list[str] = []

    def hold(match: re.Match) -> str:
        body = match.group(2)
        if len(body) > 2 and body[0] == body[-1] == " " and body.strip():
            body = body[1:-1]  # "`` `x` ``": one space each side is padding
        held.append(body.replace("\n", " "))
        return f"\ue000{len(held) - 1}\ue001"

    if not quotes:
        text = _CODE.sub(hold, text)
    text = _ANCHOR.sub("", text)
    text = _IMAGE.sub(r"\1", text)
    text = _INLINE_LINK.sub(r"\1", text)
    # "[text][label]", "[text][]": the text, where a definition names the label ("[vague][who?]"
    # in a copied encyclopedia page is no link).
    text = _REFERENCE_LINK.sub(lambda m: m.group(1) if _label(_restored(m.group(2) or m.group(1), held)) in labels
                               else m.group(0), text)
    text = _SHORTCUT.sub(lambda m: m.group(1) if _label(_restored(m.group(1), held)) in labels else m.group(0), text)
    text = _AUTOLINK.sub(r"\1", text)
    text = _BULLET.sub("\\1•", text)
    for _ in range(3):  # nested emphasis: "**bold _and italic_**"
        text = _STARS.sub(r"\2", _UNDERSCORES.sub(r"\2", text))
    text = _ESCAPE.sub(r"\1", text)
    return _HELD.sub(lambda m: held[int(m.group(1))], text)


def _restored(text: str, held: list[str]) -> str:
    return _HELD.sub(lambda m: "`" + held[int(m.group(1))] + "`", text)


def _label(label: str) -> str:
    return " ".join(label.split()).casefold()
