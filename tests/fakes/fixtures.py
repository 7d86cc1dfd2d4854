"""Pytest fixtures for the fake servers in tests/fakes."""
