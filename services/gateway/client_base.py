"""The client layer's base: connections, the server-side admin list, publishing."""

from __future__ import annotations

import uuid
from collections.abc import Iterable
from typing import Any

from faststream.nats import NatsBroker

from shared.bus import publish_event
from shared.config import Settings
from shared.errors import PermanentError
from shared.store import Store


class ForbiddenError(PermanentError):
    """The user is not allowed to do this (admin only); nothing was changed."""


def new_request_id() -> str:
    """A fresh id tying a request to its answer event (carried in reply_to)."""
    return uuid.uuid4().hex


class ClientBase:
    """Broker, store and settings, plus the admin check every admin-only call uses."""

    def __init__(
        self,
        *,
        broker: NatsBroker,
        store: Store,
        settings: Settings,
        namespace: str = "",
        actor: str = "gateway",
        admins: Iterable[str] | None = None,
        chat_timeout: float = 150.0,
    ) -> None:
        self.broker = broker
        self.store = store
        self.settings = settings
        self.namespace = namespace
        self.actor = actor
        self.admins = frozenset(settings.admins if admins is None else admins)
        self.chat_timeout = chat_timeout

    def is_admin(self, user_id: str) -> bool:
        """Whether a user is on the server-side admin list."""
        return user_id in self.admins

    def require_admin(self, user_id: str, what: str) -> None:
        """ForbiddenError unless the user is an admin."""
        if not self.is_admin(user_id):
            raise ForbiddenError(f"alleen beheerders mogen {what}")

    async def _publish(self, event: Any) -> None:
        await publish_event(self.broker, event, namespace=self.namespace)
