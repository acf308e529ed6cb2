"""Choosing the answer from the context: sentence focus, hops, span candidates, the grounded choice,
tables, fields, citations and the excerpt of a tight budget."""
