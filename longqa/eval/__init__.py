"""`longqa eval`: run longqa, its ablations and standard baselines over evaluation questions under
one token budget and one generator, and measure context recall, answer quality and cost."""
