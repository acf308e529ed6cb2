"""Parsers: turn a file into a ParsedDocument (ordered text blocks with page numbers)."""

from longqa.parse.blocks import Block, OutlineEntry, ParsedDocument
from longqa.parse.dispatch import SUPPORTED_SUFFIXES, parse_file

__all__ = ["Block", "OutlineEntry", "ParsedDocument", "SUPPORTED_SUFFIXES", "parse_file"]
