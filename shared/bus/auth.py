"""A client's NATS identity, in a module of its own: `r42 up` needs it without FastStream."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class NatsAuth:
    """A client's NATS identity: its nkey seed file and the inbox prefix it may subscribe to."""

    seed_file: Path
    inbox_prefix: str = "_INBOX"

    def options(self) -> dict[str, Any]:
        """nats-py connect() keyword arguments."""
        return {"nkeys_seed": str(self.seed_file), "inbox_prefix": self.inbox_prefix}
