"""Table output piped or redirected keeps every value whole: no title wrapped, no path cut at 80
columns."""

from __future__ import annotations

from longqa.ingest import Ingestor
from longqa.store import open_db
from tests.cli import run


def test_inspect_docs_piped_prints_whole_titles_and_paths(tmp_path, db_path):
    folder = tmp_path / "manuals" / "maintenance and repair" / "centrifugal pumps" / "seals and bearings"
    folder.mkdir(parents=True)
    title = "Maintenance Manual for Centrifugal Pumps with Mechanical Seals and Rolling Bearings"
    path = folder / "centrifugal-pump-maintenance-manual.md"
    path.write_text(f"# {title}\n\nCheck the seals monthly.\n\n## Bearings\n\nGrease the bearings yearly.\n")
    result = Ingestor(db=open_db(db_path)).ingest(path)
    assert result.status == "added", result.error
    shown = run("inspect", "docs", db=db_path, env={"COLUMNS": "80"})
    assert shown.returncode == 0, shown.stderr
    rows = [line for line in shown.stdout.splitlines() if title in line]
    assert len(rows) == 1 and str(path) in rows[0]
