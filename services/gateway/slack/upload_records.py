"""Where each Slack upload's progress message is: the one module that knows how it is stored."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from shared.store import Store

UPLOAD_KEY = "gateway:upload:{source_id}"

Record = dict[str, Any]


async def remember(store: Store, source_id: str, record: Record) -> None:
    """Store where the progress message of a source is ({channel, ts, name})."""
    await store.settings.set(UPLOAD_KEY.format(source_id=source_id), record)


async def find(store: Store, source_id: str) -> Record | None:
    """The record of a source uploaded through Slack (None for other sources)."""
    found: Record | None = await store.settings.get(UPLOAD_KEY.format(source_id=source_id))
    return found


async def change(store: Store, source_id: str, fn: Callable[[Record | None], Record]) -> Record:
    """Atomically replace a record with fn(current)."""
    updated: Record = await store.settings.update(UPLOAD_KEY.format(source_id=source_id), fn)
    return updated
