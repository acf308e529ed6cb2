"""The repository speaks of the product: no file names the working sessions or the tracker's issue
numbers that produced it (that history lives in git and CHANGELOG.md)."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

# Numbered work sessions, a session named as a point in time, tracker numbers.
PATTERNS = [
    re.compile(r"\bsessions?\s+\d", re.IGNORECASE),
    re.compile(r"\b(this|that|last|next|previous|earlier|later|same)\s+session\b", re.IGNORECASE),
    re.compile(r"\bsession's\b", re.IGNORECASE),
    re.compile(r"\bissues?\s*#?\s*\d", re.IGNORECASE),
    re.compile(r"\bhelper\s+[A-Z]\b"),
]
TEXT_SUFFIXES = {".py", ".md", ".json", ".jsonl", ".toml", ".txt", ".cfg", ".ini", ".yml", ".yaml", ".sh", ""}


def _repository_files() -> list[Path]:
    """Tracked and untracked-but-not-ignored files; without git (an unpacked sdist), every file
    outside hidden and build folders."""
    try:
        listed = subprocess.run(["git", "-C", str(REPO), "ls-files", "--cached", "--others", "--exclude-standard"],
                                capture_output=True, text=True, timeout=30, check=True).stdout.splitlines()
        return [REPO / name for name in listed]
    except (OSError, subprocess.SubprocessError):
        skip = {"__pycache__", "build", "dist"}
        return [p for p in REPO.rglob("*") if p.is_file()
                and not any(part.startswith(".") or part in skip or part.endswith(".egg-info")
                            for part in p.relative_to(REPO).parts[:-1])]


def mentions(text: str) -> list[str]:
    return [m.group(0) for pattern in PATTERNS for m in pattern.finditer(text)]


def test_the_patterns_catch_work_history():
    assert mentions("F1 0.271 in sess" "ions 11-13") == ["sess" "ions 1"]
    assert mentions("as is" "sue 9 asks") and mentions("see Is" "sue #12")
    assert mentions("the stores of th" "is session") and mentions("Sess" "ion 8's change")
    assert mentions("from help" "er D") == ["help" "er D"]
    # The words in their ordinary senses stay allowed.
    assert mentions("an onnxruntime InferenceSession; a pytest session; helpers commit on their own") == []
    assert mentions("a known issue: 3 of 5 pages") == []


def test_no_file_mentions_sessions_or_issue_numbers():
    found = []
    for path in _repository_files():
        if path.suffix not in TEXT_SUFFIXES or not path.is_file():
            continue
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue
        for number, line in enumerate(text.splitlines(), 1):
            for hit in mentions(line):
                found.append(f"{path.relative_to(REPO)}:{number}: {hit!r}")
    assert not found, "work history in the repository:\n" + "\n".join(found[:50])
