"""The per-question results file: one JSON line per (system, question), appended as each finishes.

An interrupted run leaves at most one damaged last line, which is ignored on reading; the next run
with the same settings reads the file and skips every (system, question) already there. Lines carry
the run key (a hash of every setting that changes results), so a file is never resumed under
different settings.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path


def run_key(settings: dict) -> str:
    return hashlib.sha256(json.dumps(settings, sort_keys=True, default=str).encode()).hexdigest()[:16]


class ResultsFile:
    def __init__(self, path: Path, key: str, fresh: bool = False):
        self.path = path
        self.key = key
        path.parent.mkdir(parents=True, exist_ok=True)
        if fresh and path.exists():
            path.unlink()
        self.done: dict[tuple[str, str], dict] = {}
        self.ignored = 0  # lines from other settings or damaged by an interruption
        if path.exists():
            self._read()

    def _read(self) -> None:
        for line in self.path.read_text(encoding="utf-8", errors="replace").splitlines():
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError:
                self.ignored += 1
                continue
            if not isinstance(record, dict) or record.get("run_key") != self.key:
                self.ignored += 1
                continue
            self.done[(record["system"], record["id"])] = record

    def has(self, system: str, question_id: str) -> bool:
        return (system, question_id) in self.done

    def append(self, record: dict) -> None:
        record = {**record, "run_key": self.key}
        line = json.dumps(record, ensure_ascii=False)
        needs_newline = False
        if self.path.exists() and self.path.stat().st_size:
            with self.path.open("rb") as handle:
                handle.seek(-1, 2)
                needs_newline = handle.read(1) != b"\n"  # a line cut short by an interruption
        with self.path.open("a", encoding="utf-8") as handle:
            handle.write(("\n" if needs_newline else "") + line + "\n")
            handle.flush()
        self.done[(record["system"], record["id"])] = record
