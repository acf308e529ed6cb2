"""GBNF builders: exact literals, and grammars that llama.cpp's parser accepts."""

from __future__ import annotations

import pytest

from longqa.models import grammar


def test_literal_escapes_quotes_backslashes_and_newlines():
    assert grammar.literal('say "hi"\\\n') == '"say \\"hi\\"\\\\\\n"'
    assert grammar.literal("Ünïcode ok") == '"Ünïcode ok"'


def test_choice_lists_each_option_once_in_order():
    assert grammar.choice(["yes", "no", "yes"]) == 'root ::= "yes" | "no"\n'
    with pytest.raises(ValueError):
        grammar.choice([])
    with pytest.raises(ValueError):
        grammar.choice(["a", ""])


@pytest.mark.models
@pytest.mark.parametrize("text", [
    grammar.choice([" yes", " no"]),
    grammar.choice(['say "x"', "line\nbreak"]),
    grammar.integer(4),
    grammar.line(40),
])
def test_every_builder_yields_a_grammar_llama_cpp_accepts(text):
    from longqa.models.resolve import load_generator

    llm = load_generator().llama
    assert grammar.compile_grammar(llm, text) is grammar.compile_grammar(llm, text)  # cached


@pytest.mark.models
def test_bad_grammar_is_rejected_before_sampling(capfd):
    from longqa.models.resolve import load_generator

    with pytest.raises(ValueError, match="invalid GBNF grammar"):
        grammar.compile_grammar(load_generator().llama, 'root ::= "unclosed')
    assert capfd.readouterr().err == ""  # llama.cpp's parser complaint is not printed
