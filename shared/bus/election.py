"""Repeat a JetStream operation while a clustered stream elects a new leader."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

LEADERLESS_FOR_S = 15.0
"""How long an operation is repeated while its stream has no leader (a node just died)."""


async def through_election[T](
    operation: Callable[[], Awaitable[T]],
    *,
    leaderless: tuple[type[BaseException], ...],
    within: float = LEADERLESS_FOR_S,
) -> T:
    """Run `operation`, repeating it on a `leaderless` error for up to `within` seconds.

    The pause doubles from 0.25 s to 2 s; the last error is raised once the next pause would
    end past the window. Only for operations that are safe to repeat.
    """
    loop = asyncio.get_running_loop()
    deadline, pause = loop.time() + within, 0.25
    while True:
        try:
            return await operation()
        except leaderless:
            if loop.time() + pause > deadline:
                raise
            await asyncio.sleep(pause)
            pause = min(pause * 2, 2.0)
