"""The extractor: the knowledge graph's one writer.

It turns sources (uploaded documents, the GitHub handbook) into topics and typed relations
through Claude tool use, chunk by chunk; applies approved deltas and graph-analysis
actions; and publishes `kb.updated` after every change. Modules:

- `app` wiring (subscribers, cancel broadcast, first-start sample handbook), `handlers`
  thin subscribers, `pipeline` the LLM step, `merge` the merge step, `outcomes` the end
  of a source, `uploads` validating and registering sources, `local` the bus-free runner
  the CLI uses, `handbook` + `github` the handbook sync, `graph_plan` + `graph_analysis`
  the admin analysis, `deltas` approved suggestions, `offline` deterministic tool output.
"""
