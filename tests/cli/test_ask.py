"""`longqa ask` through the real entry point (in-process, fake models): output channels, exit
codes, stdin, JSON contract, and that streamed, --no-stream and --json answers agree."""

import io
import json
import sys

import pytest

from longqa.ask.settings import AskSettings
from longqa.cli import main
from tests.conftest import use_fake_models
from tests.fakes import FakeGenerator

QUESTION = "How fast do the emergency diesel generators start after a grid loss?"


def longqa(monkeypatch, capsys, *args, stdin: str | None = None):
    monkeypatch.setattr(sys, "argv", ["longqa", *map(str, args)])
    if stdin is not None:
        monkeypatch.setattr(sys, "stdin", io.StringIO(stdin))
    with pytest.raises(SystemExit) as exited:
        main()
    captured = capsys.readouterr()
    return exited.value.code, captured.out, captured.err


def test_streamed_no_stream_and_json_answers_agree(store, monkeypatch, capsys):
    code, streamed, _ = longqa(monkeypatch, capsys, "ask", QUESTION, "--budget", "400", "-d", store)
    assert code == 0
    code, whole, _ = longqa(monkeypatch, capsys, "ask", QUESTION, "--budget", "400", "--no-stream", "-d", store)
    assert code == 0 and whole == streamed
    code, out, _ = longqa(monkeypatch, capsys, "ask", QUESTION, "--budget", "400", "--json", "-d", store)
    data = json.loads(out)
    answer, sources = streamed.split("\nSources:\n")
    first_line, quote_block = answer.split("\n", 1)
    assert first_line.strip() == data["answer"]
    quote = data["quotes"][0]  # shown verbatim under the answer, with where it stands
    assert f"\u201c{quote['text']}\u201d" in quote_block and quote["section"] in quote_block
    assert "p. " not in quote_block  # a markdown file has no pages: its section path says where
    # the one source listed is the passage the quote comes from (at 400 tokens the context is
    # excerpts, so other sections' sentences may come before it)
    cited = [c for c in data["citations"] if c["cited"]]
    assert len(cited) == 1 and sources.count("\n") == 1
    assert sources.strip().startswith(f"[{cited[0]['n']}] Harbor Point Reactor Handbook — Emergency Procedures")
    assert data["citations"][0]["page_start"] == 1


def test_absent_topic_exits_4_and_says_so(store, monkeypatch, capsys):
    code, out, err = longqa(monkeypatch, capsys, "ask", "What is the boiling point of tungsten?", "-d", store)
    assert code == 4 and out == ""
    assert "nothing in the store is relevant" in err
    code, out, err = longqa(monkeypatch, capsys, "ask", "What is the boiling point of tungsten?", "--json", "-d", store)
    data = json.loads(out)
    assert code == 4 and data["answer"] is None and data["context"] == [] and data["found"] is False


def test_question_from_stdin_and_explain_on_stderr(store, monkeypatch, capsys):
    code, out, err = longqa(monkeypatch, capsys, "ask", "-", "--json", "--explain", "-d", store, stdin=QUESTION + "\n")
    data = json.loads(out)  # stdout holds the JSON document and nothing else
    assert code == 0 and data["question"] == QUESTION
    assert "R_q" in err and "bm25" in err and "timings" in err
    # who answered, and whether it may decline: the fake is no reader profile and has no template
    assert "answered by: fake-generator, a chooser" in err.split("\nsettings:\n", 1)[0]


def test_explain_prints_the_settings_in_effect_after_the_rest(store, monkeypatch, capsys):
    code, _, err = longqa(monkeypatch, capsys, "ask", QUESTION, "--explain", "--confidence", "0.9",
                          "--context-only", "-d", store)
    assert code == 0
    settings = err.split("\nsettings:\n", 1)[1].splitlines()
    assert "timings" in err.split("\nsettings:\n", 1)[0]
    assert "  search.confidence = 0.9" in settings  # the flag, not the default
    assert "  retrieval.k = 20" in settings and "  answer.max_sources = 3" in settings
    assert len(settings) == len(AskSettings().lines())


def test_context_only_prints_cited_passages(store, monkeypatch, capsys):
    code, out, _ = longqa(monkeypatch, capsys, "ask", QUESTION, "--context-only", "--budget", "300", "-d", store)
    assert code == 0 and out.startswith("# Harbor Point Reactor Handbook\n\n[1] ")
    assert "10 seconds" in out
    code, out, _ = longqa(monkeypatch, capsys, "ask", QUESTION, "--context-only", "--json", "-d", store)
    data = json.loads(out)
    assert data["answer"] is None and data["context"] and data["context_tokens"] <= 2000


def test_bad_inputs_are_one_line_errors(store, monkeypatch, capsys, tmp_path):
    code, _, err = longqa(monkeypatch, capsys, "ask", QUESTION, "--doc", "nope.pdf", "-d", store)
    assert code == 1 and "nope.pdf" in err and "Traceback" not in err
    code, _, err = longqa(monkeypatch, capsys, "ask", QUESTION, "-d", tmp_path / "empty.db")
    assert code == 1 and "empty" in err
    code, _, err = longqa(monkeypatch, capsys, "ask", "   ", "-d", store)
    assert code == 2
    code, out, err = longqa(monkeypatch, capsys, "ask", 'NEAR("emergency diesel" AND (generators* -start)', "--json", "-d", store)
    assert code == 0 and json.loads(out)["context"] and "Traceback" not in err


def test_absent_topic_never_loads_the_generator(store, monkeypatch, capsys):
    loads = []
    use_fake_models(monkeypatch, lambda: loads.append(1) or FakeGenerator())
    code, _, _ = longqa(monkeypatch, capsys, "ask", "What is the boiling point of tungsten?", "-d", store)
    assert code == 4 and loads == []
    code, _, _ = longqa(monkeypatch, capsys, "ask", QUESTION, "-d", store)
    assert code == 0 and loads == [1]


def test_router_flag_turns_the_router_on_and_off(store, monkeypatch, capsys):
    for mode, asked in (("on", True), ("off", False)):
        code, out, _ = longqa(monkeypatch, capsys, "ask", QUESTION, "--context-only", "--json", "--router", mode,
                              "-d", store)
        routed = [s for s in json.loads(out)["steps"] if s["action"] == "router"]
        assert code == 0 and bool(routed) == asked
    code, out, err = longqa(monkeypatch, capsys, "ask", QUESTION, "--router", "sometimes", "-d", store)
    assert code == 2 and "--router" in err and "Traceback" not in err and out == ""



def test_ask_imports_none_of_the_other_commands_and_help_imports_them_all():
    import subprocess

    show = ("import sys; from longqa.cli import register; register(sys.argv[1:]); "
            "print(' '.join(m for m in sys.modules if m.startswith(('longqa.cli.', 'longqa.eval', 'longqa.ingest'))))")

    def modules(*argv) -> set[str]:
        return set(subprocess.run([sys.executable, "-c", show, *argv], capture_output=True, text=True,
                                  check=True).stdout.split())

    others = {"longqa.cli.ingest", "longqa.cli.eval", "longqa.cli.inspect", "longqa.cli.inspect_graph",
              "longqa.ingest", "longqa.eval"}
    asking = modules("ask", "--help")
    assert "longqa.cli.ask" in asking and not asking & others
    assert modules("--help") >= others - {"longqa.ingest", "longqa.eval"} | {"longqa.cli.ask", "longqa.cli.models"}


def test_explain_says_whether_the_reader_may_decline():
    from longqa.ask.settings import DEFAULTS
    from longqa.cli.ask_output import answerer
    from longqa.models import profiles

    reader = FakeGenerator()
    reader.profile = profiles.QWEN_15B  # a reader profile with a fitted confidence table
    assert answerer(reader, DEFAULTS.with_values({"answer.reader_decline": 0.3})).endswith(
        "a reader (its own chat prompt); declines below calibrated confidence 0.3 (answer.reader_decline)")
    assert "declining on it is off" in answerer(reader, DEFAULTS.with_values({"answer.reader_decline": 0.0}))
    by_default = answerer(reader, DEFAULTS)  # the threshold chosen with the profile's table
    assert by_default.endswith("(chosen for its confidence table)") and "declines below calibrated confidence 0." in by_default
    chat_file = FakeGenerator()
    chat_file.chats = True  # a GGUF no profile declares, with a chat template
    assert answerer(chat_file, DEFAULTS).endswith(
        "a reader (the GGUF's chat template, its decisions unmeasured); no fitted confidence, so it never "
        "declines on confidence")
