"""GARLIC/PECAN's information-point graph: points over groups of leaves, level by level, with
weighted edges from each point to the nodes it was drawn from (attention, or a cosine proxy)."""
