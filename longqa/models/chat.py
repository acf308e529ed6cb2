"""Chat prompts rendered through the model's own template (the GGUF's `tokenizer.chat_template`).

An instruction-tuned model was trained on its template's turns; a prompt in any other shape reads
to it as noise. The template is Jinja, run in a sandbox (a model file is data, not code). The text
longqa puts in the messages (document sentences, the user's question) has the profile's control
markers broken ("<|" becomes "< |"), so that the prompt, whose control tokens are parsed, never
holds a turn that the text opened or closed; what is shown and quoted is always the stored text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from longqa.errors import ModelError


@dataclass(frozen=True)
class Message:
    role: str  # system | user | assistant
    content: str


# The control-token spellings of the common chat formats (ChatML, Llama 3 and Phi `<|...|>`,
# DeepSeek's full-width `<｜...｜>`, Gemma's turns, Mistral's `[INST]`, the usual BOS and EOS):
# broken in text sent to a model that no profile describes, beside whatever its server declares.
COMMON_MARKERS = ("<|", "|>", "<\uff5c", "\uff5c>", "<start_of_turn>", "<end_of_turn>", "[INST]", "[/INST]",
                  "<s>", "</s>", "<bos>", "<eos>")
# Tokens as a chat template spells them: `<|im_start|>`, `<start_of_turn>`, `[INST]`.
_TEMPLATE_TOKEN = re.compile(r"<[|\uff5c]|[|\uff5c]>|</?[A-Za-z][A-Za-z0-9_]{1,40}>|\[/?[A-Z][A-Z_]{1,30}\]")


def markers_in(*texts: str | None) -> tuple[str, ...]:
    """The control-token spellings a model declares: those in its chat template and its BOS and
    EOS tokens (as llama-server's /props gives them), for a model no profile describes."""
    found: list[str] = []
    for text in texts:
        for token in _TEMPLATE_TOKEN.findall(text or ""):
            if token not in found:
                found.append(token)
    return tuple(found)


def defuse(text: str, markers: tuple[str, ...]) -> str:
    """`text` with each control marker broken by a space after its first character."""
    for marker in markers:
        if marker in text:
            text = text.replace(marker, f"{marker[0]} {marker[1:]}")
    return text


@lru_cache(maxsize=4)
def _compiled(template: str):
    from jinja2 import TemplateError
    from jinja2.sandbox import ImmutableSandboxedEnvironment

    def raise_exception(message):
        raise TemplateError(message)

    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True)
    env.globals["raise_exception"] = raise_exception
    try:
        return env.from_string(template)
    except TemplateError as exc:
        raise ModelError(f"the model's chat template does not compile ({exc})") from None


def render(template: str, messages: list[Message], markers: tuple[str, ...] = (), *, bos: str = "",
           eos: str = "", generation_prompt: bool = True) -> str:
    """The prompt text of `messages`, up to the opening of the assistant's turn."""
    from jinja2 import TemplateError

    shown = [{"role": m.role, "content": defuse(m.content, markers)} for m in messages]
    try:
        return _compiled(template).render(messages=shown, add_generation_prompt=generation_prompt,
                                          bos_token=bos, eos_token=eos)
    except TemplateError as exc:
        raise ModelError(f"the model's chat template cannot render these messages ({exc})") from None


def fixed_head(template: str, system: str, markers: tuple[str, ...] = (), *, bos: str = "") -> str:
    """The part of every prompt with this system message that comes before the user's text: the
    state a local model keeps (LlamaGenerator.keep_prefix) so each question reads only its own."""
    probe = "\x00"
    text = render(template, [Message("system", system), Message("user", probe)], markers, bos=bos)
    at = text.find(probe)
    return text[:at] if at > 0 else ""


class ChatPrompt(str):
    """Chat messages as one prompt value, for a generator without a local template (a server, which
    renders them itself at /chat/completions): its text shows the turns, for `--json` and caches;
    `messages` holds them, their text already defused."""

    messages: tuple[Message, ...]

    def __new__(cls, messages: list[Message], markers: tuple[str, ...] = ()):
        shown = tuple(Message(m.role, defuse(m.content, markers)) for m in messages)
        prompt = super().__new__(cls, "".join(f"[{m.role}]\n{m.content}\n" for m in shown) + "[assistant]\n")
        prompt.messages = shown
        return prompt
