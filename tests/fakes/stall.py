"""A replica that stalls (a GC pause, SIGSTOP): its store calls complete, it sees them later.

Wrap a real store (its own connection to the shared file): the repository methods named in
`held` run for real, then, while their condition holds, the answer waits until the stall is
thawed. Holding the lease renewals is what makes a stalled replica's lease lapse.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from typing import Any


class Stall:
    """Whether the replica is stalled; held calls resume when it is thawed."""

    def __init__(self) -> None:
        self.frozen = False
        self.thawed = asyncio.Event()
        self.reached = asyncio.Event()

    async def hold(self) -> None:
        """Wait while frozen (the process is stopped)."""
        self.reached.set()
        if self.frozen:
            await self.thawed.wait()

    def thaw(self) -> None:
        """Let the replica run on."""
        self.frozen = False
        self.thawed.set()


class _Through:
    """A repository answering as the real one, except where the stall holds the answer."""

    def __init__(self, inner: Any, stall: Stall, held: Mapping[str, Callable[[], bool]]) -> None:
        self._inner, self._stall, self._held = inner, stall, held

    def __getattr__(self, name: str) -> Any:
        real = getattr(self._inner, name)
        if name not in self._held:
            return real
        when = self._held[name]

        async def call(*args: Any, **kwargs: Any) -> Any:
            result = await real(*args, **kwargs)
            if when():
                await self._stall.hold()  # done, but the process stopped before it saw it
            return result

        return call


class StalledStore:
    """The store of a replica that stalls: {"locks": {"renew": condition}, ...}."""

    def __init__(
        self, store: Any, stall: Stall, held: Mapping[str, Mapping[str, Callable[[], bool]]]
    ) -> None:
        self._store = store
        self._wrapped = {repo: _Through(getattr(store, repo), stall, m) for repo, m in held.items()}

    def __getattr__(self, name: str) -> Any:
        wrapped = self.__dict__.get("_wrapped", {})
        return wrapped[name] if name in wrapped else getattr(self._store, name)
