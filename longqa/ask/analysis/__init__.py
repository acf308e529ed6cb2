"""Reading the question: rules, the model's scope call, and the `Asked` record built once per question."""
