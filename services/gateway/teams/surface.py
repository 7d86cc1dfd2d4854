"""What every Teams flow shares: the client API, the sender, stored references, claims."""

from __future__ import annotations

import hashlib
import logging
import re
from dataclasses import dataclass, field
from typing import Any

from microsoft_agents.activity import Activity, ConversationReference

from services.gateway.teams import cards
from services.gateway.teams.core import Background, GatewayClient
from services.gateway.teams.dedupe import ActivityClaims
from services.gateway.teams.refs import ConversationRefs
from services.gateway.teams.sender import TeamsSender, message

log = logging.getLogger(__name__)

VIA = "teams"
_MENTION_RE = re.compile(r"<at>[^<]*</at>", re.IGNORECASE)


def user_id_of(activity: Activity) -> str:
    """The caller's id: the AAD object id (what R42_ADMINS lists), else the Teams user id."""
    sender = activity.from_property
    if sender is None:
        return ""
    return str(getattr(sender, "aad_object_id", None) or sender.id or "")


def strip_mentions(activity: Activity) -> str:
    """The message text without the bot's @mention markup."""
    return " ".join(_MENTION_RE.sub(" ", activity.text or "").split())


def conversation_key(conversation_id: str) -> str:
    """The chat rpc's conversation key: each personal chat / channel thread its own memory."""
    return "teams:" + hashlib.sha256(conversation_id.encode()).hexdigest()[:40]


@dataclass
class TeamsGateway:
    """The Teams surface's state: client, sender, references, claims and background work."""

    client: GatewayClient
    sender: TeamsSender
    refs: ConversationRefs
    claims: ActivityClaims
    background: Background = field(default_factory=Background)

    @property
    def store(self) -> Any:
        """The store behind the client."""
        return self.client.ctx.store

    def reply_to(
        self, *, conversation: str, user: str, activity: str | None = None, **extra: Any
    ) -> dict[str, Any]:
        """Routing data for an answer event that must come back to this conversation."""
        data: dict[str, Any] = {"via": VIA, "conversation": conversation, "user": user, **extra}
        if activity:
            data["activity"] = activity
        return data

    async def post(
        self,
        ref: ConversationReference,
        card: cards.Card,
        *,
        summary: str = "",
        reply_to: str | None = None,
        extra: list[dict[str, Any]] | None = None,
    ) -> str:
        """Send a card; the new message's id."""
        return await self.sender.send(
            ref, message(card, summary=summary, extra=extra), reply_to=reply_to
        )

    async def replace(
        self, ref: ConversationReference, activity_id: str, card: cards.Card, *, summary: str = ""
    ) -> None:
        """Replace a card the bot sent before."""
        await self.sender.update(ref, activity_id, message(card, summary=summary))

    async def notify(
        self,
        ref: ConversationReference,
        text: str,
        *,
        warning: bool = False,
        reply_to: str | None = None,
    ) -> str:
        """A one-line card."""
        return await self.post(
            ref, cards.notice(text, warning=warning), summary=text[:200], reply_to=reply_to
        )

    async def ref_for(self, reply_to: dict[str, Any]) -> ConversationReference | None:
        """The stored conversation an answer event goes back to."""
        conversation = reply_to.get("conversation")
        if not isinstance(conversation, str) or not conversation:
            return None
        ref = await self.refs.get(conversation)
        if ref is None:
            log.warning("no stored Teams conversation %s for a reply", conversation[:80])
        return ref
