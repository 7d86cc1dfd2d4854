"""Telemetry service: persists every `llm.call.logged` event into the llm_calls collection."""
