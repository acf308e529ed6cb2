"""Searching the trees: the plan, the search loop, refinement, bridges, the router, the graph search and
the relevance gate. Its product is a `Selection` of leaves under the budget (ask/context.py)."""
