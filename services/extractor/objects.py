"""The r42-sources bucket as the extractor uses it: read an upload once, then drop it."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

from shared.bus.objects import delete_source_object, read_source_object
from shared.errors import BusError

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class SourceObjects:
    """Uploaded files in r42-sources, through a broker's connection (once it is connected)."""

    broker: Any
    max_bytes: int

    async def read(self, name: str) -> bytes | None:
        """The object's bytes; None when it is not there."""
        return await read_source_object(self.broker.connection, name, max_bytes=self.max_bytes)

    async def drop(self, name: str, *, sha256: str | None = None) -> None:
        """Delete an object whose text the store now holds (only that content, with sha256).

        A failure only costs space.
        """
        try:
            await delete_source_object(self.broker.connection, name, sha256=sha256)
        except BusError as exc:
            log.warning("could not delete %s (the source is registered): %s", name, exc)
