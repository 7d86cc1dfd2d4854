"""What every feature module of the client shares: connections, the admin list, publishing."""

from __future__ import annotations

import uuid
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from faststream.nats import NatsBroker, PubAck

from shared.bus import publish_event
from shared.config import Settings
from shared.errors import PermanentError
from shared.store import Store


class ForbiddenError(PermanentError):
    """The user is not allowed to do this (admin only); nothing was changed."""


def new_request_id() -> str:
    """A fresh id tying a request to its answer event (carried in reply_to)."""
    return uuid.uuid4().hex


@dataclass
class CoreContext:
    """Broker, store and settings, plus the server-side admin check."""

    broker: NatsBroker
    store: Store
    settings: Settings
    admins: frozenset[str]
    namespace: str = ""
    actor: str = "gateway"
    chat_timeout: float = 150.0

    @classmethod
    def create(
        cls,
        *,
        broker: NatsBroker,
        store: Store,
        settings: Settings,
        namespace: str = "",
        actor: str = "gateway",
        admins: Iterable[str] | None = None,
        chat_timeout: float = 150.0,
    ) -> CoreContext:
        """A context whose admin list defaults to the settings' one."""
        return cls(
            broker=broker,
            store=store,
            settings=settings,
            admins=frozenset(settings.admins if admins is None else admins),
            namespace=namespace,
            actor=actor,
            chat_timeout=chat_timeout,
        )

    def is_admin(self, user_id: str) -> bool:
        """Whether a user is on the server-side admin list."""
        return user_id in self.admins

    def require_admin(self, user_id: str, what: str) -> None:
        """ForbiddenError unless the user is an admin."""
        if not self.is_admin(user_id):
            raise ForbiddenError(f"alleen beheerders mogen {what}")

    async def publish(self, event: Any) -> PubAck:
        """Publish an event in this context's namespace."""
        return await publish_event(self.broker, event, namespace=self.namespace)
