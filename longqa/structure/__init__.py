"""Document structure: turn parsed blocks into a tree of sections and paragraphs."""
