"""Golden-set evals of R42's LLM and retrieval paths: `r42 eval` / `make eval`.

Each suite in `evals.suites` runs the services' own code in-process against a temp SQLite
store and the configured LLM provider; golden sets and thresholds live in `evals/<suite>/`;
results go to `evals/results/`. See evals/README.md.
"""
