"""Model structuring cost and validity on real plain-text documents.

    python bench/structure.py DOC.txt [DOC.txt ...] [--decoder stepwise|grammar] [--no-embedder]
        [--max-tokens N] [--summaries]

For each document prints: input tokens (the generator's own), units, windows, sections, tokens
generated per input token (target <= 0.12), outline tokens per input token (the size of the
markup LongRefiner's model would write), seconds per 1,000 input tokens, whether the tree
passed validation, and the titles. No cache is used, so every figure is a cold run. With
--summaries it also times one-sentence summaries for every section.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from longqa.models.resolve import load_embedder, load_generator
from longqa.parse import parse_file
from longqa.parse.blocks import ParsedDocument
from longqa.models.counting import CountingGenerator
from longqa.structure.llm import LlmStructurer, StructureOptions
from longqa.structure.titles import summarize_sections
from longqa.structure.tree import sections
from longqa.tokens import count, truncate


def clip(doc: ParsedDocument, max_tokens: int | None) -> ParsedDocument:
    """The document's leading blocks up to about `max_tokens` tokens (to bound a bench run)."""
    if not max_tokens:
        return doc
    kept, used = [], 0
    for block in doc.blocks:
        if used >= max_tokens:
            break
        text = truncate(block.text, max_tokens - used)
        used += count(text)
        kept.append(type(block)(**{**block.__dict__, "text": text}))
    return ParsedDocument(doc.path, doc.title, doc.pages, kept, doc.outline, doc.format)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("paths", nargs="+", type=Path)
    parser.add_argument("--decoder", default="stepwise", choices=("stepwise", "grammar"))
    parser.add_argument("--no-embedder", action="store_true", help="gap scores from the generator only")
    parser.add_argument("--k", type=int, default=4)
    parser.add_argument("--max-tokens", type=int, default=None, help="structure only the first N tokens")
    parser.add_argument("--summaries", action="store_true", help="also time section summaries")
    args = parser.parse_args()

    started = time.perf_counter()
    generator = load_generator()
    embedder = None if args.no_embedder else load_embedder()
    print(f"models loaded in {time.perf_counter() - started:.1f}s: {generator.name}"
          f"{'' if embedder is None else ' + ' + embedder.name}; decoder {args.decoder}, k={args.k}")
    options = StructureOptions(decoder=args.decoder, k=args.k)
    totals = {"input": 0, "generated": 0, "seconds": 0.0}
    for path in args.paths:
        doc = clip(parse_file(path), args.max_tokens)
        body = "\n\n".join(block.text for block in doc.blocks)
        input_tokens = generator.count_tokens(body)
        structurer = LlmStructurer(generator, None, embedder, options)
        root = structurer(doc)
        r = structurer.report
        totals["input"] += input_tokens
        totals["generated"] += r.generated_tokens
        totals["seconds"] += r.seconds
        print(
            f"\n{path.name}: {input_tokens:,} input tokens, {r.units} units, {r.windows} windows, "
            f"{r.sections} sections, {r.model_calls} model calls\n"
            f"  generated/input {r.generated_tokens / input_tokens:.4f} ({r.generated_tokens} tokens)"
            f"  outline/input {r.markup_tokens / input_tokens:.3f}"
            f"  {1000 * r.seconds / input_tokens:.2f} s per 1k input tokens ({r.seconds:.1f}s)"
            f"  valid {r.valid}{'' if r.valid else ' (' + r.reason + ')'}\n"
            f"  of which generator {r.generator_seconds:.1f}s, embedder {r.embedder_seconds:.1f}s"
        )
        if root is None:
            continue
        for node in sections(root):
            print(f"  {'  ' * (node.depth - 1)}- {node.title}  [{node.tokens} tok]")
        if args.summaries:
            counter = CountingGenerator(generator)
            t0 = time.perf_counter()
            done = summarize_sections(root, counter, None)
            spent = time.perf_counter() - t0
            print(f"  summaries: {done} in {spent:.1f}s ({spent / max(done, 1):.2f} s/section, "
                  f"{counter.generated_tokens / max(done, 1):.1f} generated tokens/section)")
            for node in sections(root)[:3]:
                print(f"    {node.title}: {node.summary}")
    if totals["input"]:
        print(f"\nall: generated/input {totals['generated'] / totals['input']:.4f}, "
              f"{1000 * totals['seconds'] / totals['input']:.2f} s per 1k input tokens "
              "(2 shared CPU cores; other developers' jobs running)")


if __name__ == "__main__":
    main()
