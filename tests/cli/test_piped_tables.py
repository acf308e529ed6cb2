"""Table output piped or redirected keeps every value whole: no title wrapped, no path cut at 80
columns."""

from __future__ import annotations

from longqa.ingest import Ingestor
from longqa.store import open_db
from tests.command import run


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


def test_explain_tables_piped_keep_whole_section_paths(tmp_path, monkeypatch, capsys):
    from longqa.models import resolve
    from tests.ask_support import build_store
    from tests.fakes import FakeEmbedder, FakeGenerator
    from tests.cli.test_ask import longqa

    title = "Maintenance Manual for Centrifugal Pumps with Mechanical Seals and Rolling Bearings"
    text = (f"# {title}\n\n## Bearings\n\nThe pumps are serviced every spring.\n\n"
            "Grease the bearings of the drive end every six months with lithium grease.\n")
    db_path = tmp_path / "store.db"
    build_store(db_path, {"pumps.md": text}, tmp_path)
    monkeypatch.setattr(resolve, "load_generator", lambda model=None, llm_url=None, **kw: FakeGenerator())
    monkeypatch.setattr(resolve, "load_embedder", lambda embed_model=None, llm_url=None: FakeEmbedder())
    monkeypatch.setenv("COLUMNS", "80")
    code, _, err = longqa(monkeypatch, capsys, "ask", "How often are the drive end bearings greased?",
                          "--context-only", "--explain", "-d", db_path)
    assert code == 0, err
    rows = [line for line in err.splitlines() if title in line]
    assert len(rows) == 1 and "p. 1" in rows[0], err
