"""The README stays a short page for users: at most 250 lines, a Quick start of exactly two commands,
and every relative link in it and in docs/ leads to a file (and heading) that exists."""

from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
MAX_LINES = 250

LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
FENCE = re.compile(r"^```.*?^```", re.S | re.M)
CODE = re.compile(r"`[^`\n]*`")


def _prose(text: str) -> str:
    """The text without fenced blocks and code spans, where brackets are not links."""
    return CODE.sub("", FENCE.sub("", text))


def anchors(text: str) -> set[str]:
    """The anchors GitHub gives a Markdown file's headings: lower case, punctuation dropped, spaces
    to hyphens, a repeated one numbered -1, -2, ..."""
    seen: dict[str, int] = {}
    found = set()
    for heading in re.findall(r"^#{1,6} +(.+?) *#*$", FENCE.sub("", text), flags=re.M):
        slug = re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")
        count = seen.get(slug, 0)
        seen[slug] = count + 1
        found.add(slug if count == 0 else f"{slug}-{count}")
    return found


def broken_links(path: Path, root: Path = REPO) -> list[str]:
    """Relative links of one Markdown file whose file, or whose heading anchor, does not exist."""
    text = path.read_text(encoding="utf-8")
    broken = []
    for target in LINK.findall(_prose(text)):
        if re.match(r"[a-z][a-z0-9+.-]*:", target):  # https:, mailto:
            continue
        name, _, anchor = target.partition("#")
        file = (path.parent / name).resolve() if name else path
        if not file.exists():
            broken.append(f"{path.relative_to(root)}: {target} (no such file)")
        elif anchor and file.suffix == ".md" and anchor not in anchors(file.read_text(encoding="utf-8")):
            broken.append(f"{path.relative_to(root)}: {target} (no such heading)")
    return broken


def section(text: str, heading: str) -> str:
    start = text.index(f"\n## {heading}\n")
    end = text.find("\n## ", start + 1)
    return text[start:end if end > 0 else None]


def test_the_readme_is_at_most_250_lines():
    lines = (REPO / "README.md").read_text(encoding="utf-8").splitlines()
    assert len(lines) <= MAX_LINES, f"README.md has {len(lines)} lines; move detail to docs/"


def test_the_quick_start_is_two_one_line_commands_the_second_running_the_tests():
    quick = section((REPO / "README.md").read_text(encoding="utf-8"), "Quick start")
    commands = re.findall(r"^```bash\n(.*?)\n```$", quick, flags=re.S | re.M)
    assert len(commands) == 2 and all("\n" not in command for command in commands)
    assert "longqa ask " in commands[0] and commands[1].endswith("python -m pytest -q")


def test_every_relative_link_in_the_readme_and_docs_resolves():
    pages = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
    assert [problem for page in pages for problem in broken_links(page)] == []


def test_the_link_check_catches_a_missing_file_and_heading(tmp_path):
    (tmp_path / "other.md").write_text("# Other\n\n## A `code` heading, here\n", encoding="utf-8")
    page = tmp_path / "page.md"
    page.write_text("[ok](other.md#a-code-heading-here) [x](gone.md) [y](other.md#gone) [z](#other)\n"
                    "`[not](a-link.md)` [web](https://example.org/x)\n\n# Other\n", encoding="utf-8")
    assert broken_links(page, tmp_path) == ["page.md: gone.md (no such file)", "page.md: other.md#gone (no such heading)"]
    assert anchors("# Tests\n## Tests\n## How `ask` works\n") == {"tests", "tests-1", "how-ask-works"}
