"""R42 shared library: config, errors, LLM, bus, store, knowledge base, runtime."""
