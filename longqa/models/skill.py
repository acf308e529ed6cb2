"""How much a model-made decision may steer, from its measured skill (bench/decisions.py).

Each decision (scope, type, outline choice, sufficiency, the router's moves) was scored against
dev labels on the TUNE half with the model in use: accuracy for choices, AUC for probabilities.
Its weight is how far that stands above chance, scaled to [0, 1] — 0 at chance (the decision does
not steer), 1 for a perfect one:
    weight = max(0, (skill - chance) / (1 - chance))        (AUC: chance 0.5)
A model that was never measured (a profile without a table, a file passed with -m, a server's
model) gets weight 0 for every decision: its decisions do not steer until bench/decisions.py has
measured them (`--explain` says so). A server whose model id is a measured model's GGUF file
(llama.cpp's servers name a model by its path) is that model: it steers as far as it does
in-process.
"""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path

from longqa.errors import ModelError

DECISIONS_FILE = Path(__file__).with_name("data") / "decisions.json"


@lru_cache(maxsize=1)
def measured() -> dict[str, dict[str, tuple[float, float]]]:
    """generator identity prefix -> decision -> (measured skill, chance level), as
    `python bench/decisions.py --out` wrote them (the file records each table's command, commit,
    date, half, question count and load). A decision a measured model was not scored on (free text,
    say) does not steer for it, nor one whose row says `"steers": false` (above chance on the tune
    half, but the report half's answers or evidence did not hold with it on: its `report` says so)."""
    return {prefix: {name: (float(row["skill"]), float(row["chance"])) for name, row in table["decisions"].items()
                     if row.get("steers", True)}
            for prefix, table in _tables().items()}


def _tables() -> dict:
    """The file as written (read at each call: measured() keeps what steering needs)."""
    try:
        tables = json.loads(DECISIONS_FILE.read_text(encoding="utf-8"))["models"]
        for table in tables.values():
            for row in table["decisions"].values():
                float(row["skill"]), float(row["chance"])
        return tables
    except (OSError, UnicodeDecodeError, ValueError, KeyError, TypeError, AttributeError) as exc:
        raise ModelError(f"{DECISIONS_FILE}: not a table of measured decisions ({type(exc).__name__}: {exc}); "
                         "reinstall longqa") from None


def explained(generator) -> list[str]:
    """What `--explain` says of each measured decision of `generator`'s model: whether it steers,
    and the figures that say so (tune skill beside chance; the report half's check where one was
    made). Empty for a model never measured (unmeasured_note says that)."""
    table = _tables().get(_table_key(generator) or "")
    if table is None:
        return []
    lines = []
    for name, row in sorted(table["decisions"].items()):
        router = name.startswith("router")
        w = router_weight(generator) if router else weight(generator, name)
        figure = (f"{MEASURE.get(name, 'skill')} {row['skill']:.2f} against chance {row['chance']:.2f} "
                  f"on {row.get('n', '?')} tune cases")
        report = row.get("report")
        if not row.get("steers", True):
            state = f"does not steer: {figure}, but {report or 'the report half did not hold'}"
        elif w > 0:
            state = f"steers at weight {w:.2f}: {figure}" + (f"; {report}" if report else "")
        else:
            state = f"does not steer: {figure} (" + (
                "the router moves only where both its moves stand above chance)" if router else "not above chance)")
        lines.append(f"decision {name} {state}")
    return lines


# What each decision's skill is (bench/decisions.py): an AUC for a probability, an accuracy for a choice.
MEASURE = {"scope": "AUC", "sufficiency": "AUC", "outline": "top-1 accuracy", "type": "balanced accuracy",
           "router-expand": "accuracy", "router-answer": "balanced accuracy",
           "next-query": "share of hops bringing an answer"}


def weight(generator, decision: str) -> float:
    """Weight in [0, 1] of `decision` made by `generator` (0 without a generator)."""
    if generator is None:
        return 0.0
    table = measured_table(generator)
    if table is None or decision not in table:
        return 0.0
    return weight_of(*table[decision])


def weight_of(skill: float, chance: float) -> float:
    """How far a measured skill stands above chance, scaled to [0, 1]: the weight it steers at."""
    return max(0.0, (skill - chance) / (1.0 - chance)) if chance < 1 else 0.0


def measured_table(generator) -> dict[str, tuple[float, float]] | None:
    """The measured decisions of `generator`'s profile (or of the model a name or served file
    stands for), or None when it was never measured."""
    key = _table_key(generator)
    return None if key is None else measured().get(key)


def _table_key(generator) -> str | None:
    """The name `generator`'s decisions are measured under: its profile's, or the model family a
    name or served file starts with."""
    from longqa.models.profiles import profile_of

    profile = profile_of(generator)
    tables = measured()
    if profile is not None:
        return profile.name if profile.name in tables else None
    names = [str(getattr(generator, key, "") or "") for key in ("name", "model_file")]
    return next((prefix for prefix in tables if any(name.startswith(prefix) for name in names)), None)


def router_weight(generator) -> float:
    """The router makes two decisions in one move: which node to read next and whether to stop; it
    steers only as far as the weaker of the two was measured to be (0 when either is at chance)."""
    return min(weight(generator, "router-expand"), weight(generator, "router-answer"))


def unmeasured_note(generator) -> str | None:
    """What `--explain` says of a generator whose decisions were never measured; None otherwise."""
    if generator is None or measured_table(generator) is not None:
        return None
    from longqa.models import profiles

    role = ("reads as a reader through its GGUF's own chat template (no fitted confidence, so it never "
            "declines on its own probability); " if profiles.profile_of(generator) is None
            and profiles.is_reader(generator) else "")
    return (f"{getattr(generator, 'name', 'the model')}: {role}its decisions (scope, type, outline, sufficiency, "
            "router) were never measured (bench/decisions.py), so none steers; rules decide")
