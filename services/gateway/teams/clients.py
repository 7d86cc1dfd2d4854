"""Connector clients only where the bot sends: proactive turns get real ones, inbound none.

The SDK builds a Bot Connector client and a user-token client (two HTTP sessions, each
reading package metadata) for every inbound activity. This bot never sends from an
inbound turn — replies go out proactively after the HTTP answer and invoke answers ride
in the response — so inbound turns get a stand-in that refuses use, and the 50th of 50
simultaneous activities is answered in milliseconds instead of being queued behind them.
"""

from __future__ import annotations

from typing import Any

from microsoft_agents.hosting.core import (
    ClaimsIdentity,
    RestChannelServiceClientFactory,
    TurnContext,
)
from microsoft_agents.hosting.core.connector.teams import TeamsConnectorClient

CONTINUE = "ContinueConversation"


class _Unused:
    """Stands in for a client an inbound turn never uses; any use is a programming error."""

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        raise RuntimeError(f"this turn has no Bot Connector client ({name}): reply proactively")

    async def close(self) -> None:
        return None


def _proactive(context: TurnContext | None) -> bool:
    activity = context.activity if context is not None else None
    return activity is None or (activity.type == "event" and activity.name == CONTINUE)


class _Kept:
    """A shared connector client whose per-turn close() leaves it open for the next send."""

    def __init__(self, client: Any) -> None:
        self._client = client

    def __getattr__(self, name: str) -> Any:
        return getattr(self._client, name)

    async def close(self) -> None:
        return None


class ProactiveOnlyClients(RestChannelServiceClientFactory):
    """Real connector clients for proactive sends; stand-ins for inbound turns and user tokens.

    Proactive clients are kept per serviceUrl and token (a token change makes a new one), so
    a send reuses the HTTP connection pool instead of opening a session each time.
    """

    MAX_KEPT = 64

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._kept: dict[tuple[str, str], Any] = {}

    async def aclose(self) -> None:
        """Close every kept client (at shutdown)."""
        kept, self._kept = self._kept, {}
        for client in kept.values():
            await client._client.close()

    async def create_connector_client(
        self, context: TurnContext | None, claims_identity: ClaimsIdentity, service_url: str,
        audience: str, scopes: list[str] | None = None, use_anonymous: bool = False,
    ) -> Any:  # fmt: skip
        if not _proactive(context):
            return _Unused()
        # The SDK's own path for a non-agentic Teams send, minus a new session per send.
        provider = (
            self._ANONYMOUS_TOKEN_PROVIDER
            if use_anonymous
            else self._connection_manager.get_token_provider(claims_identity, service_url)
        )
        token = await provider.get_access_token(
            audience, scopes or claims_identity.get_token_scope()
        )
        key = (service_url, token or "")
        kept = self._kept.get(key)
        if kept is not None:
            return kept
        if len(self._kept) >= self.MAX_KEPT:
            _, oldest = self._kept.popitem()
            await oldest._client.close()
        self._kept[key] = _Kept(TeamsConnectorClient(endpoint=service_url, token=token or ""))
        return self._kept[key]

    async def create_user_token_client(
        self, context: TurnContext, claims_identity: ClaimsIdentity, use_anonymous: bool = False
    ) -> Any:
        return _Unused()  # the bot signs nobody in
