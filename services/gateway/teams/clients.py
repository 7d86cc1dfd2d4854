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


class ProactiveOnlyClients(RestChannelServiceClientFactory):
    """Real connector clients for proactive sends; stand-ins for inbound turns and user tokens."""

    async def create_connector_client(  # type: ignore[override]
        self, context: TurnContext | None, claims_identity: ClaimsIdentity, service_url: str,
        audience: str, scopes: list[str] | None = None, use_anonymous: bool = False,
    ) -> Any:  # fmt: skip
        if not _proactive(context):
            return _Unused()
        return await super().create_connector_client(
            context, claims_identity, service_url, audience, scopes, use_anonymous
        )

    async def create_user_token_client(  # type: ignore[override]
        self, context: TurnContext, claims_identity: ClaimsIdentity, use_anonymous: bool = False
    ) -> Any:
        return _Unused()  # the bot signs nobody in
