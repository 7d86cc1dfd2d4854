"""CLI commands: ops (filled in by its issue)."""

from __future__ import annotations

import typer


def register(app: typer.Typer) -> None:
    """Register the ops commands on the root app."""
    del app
