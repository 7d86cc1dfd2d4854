"""Learning content: this week's topic, content requests, an admin's article refinement."""

from __future__ import annotations

from typing import Any

from services.gateway.core.context import CoreContext, new_request_id
from services.gateway.core.models import WeeklyTopic
from services.gateway.core.week import quiz_status, weekly_topic_of
from shared.bus import ContentRequested, ContentType, request
from shared.bus.content_rpc import (
    MAX_INSTRUCTION_CHARS,
    REFINE_SUBJECT,
    RefineReply,
    RefineRequest,
)
from shared.errors import BadInputError, NotFoundError
from shared.store import Content, Topic

LEARN_KINDS: tuple[ContentType, ...] = ("article", "slides", "infographic")
_ALIASES: dict[str, ContentType] = {
    "": "article",
    "artikel": "article",
    "dia's": "slides",
    "slide": "slides",
}


def parse_learn(text: str) -> ContentType:
    """The content kind of a /learn argument (article by default); BadInputError otherwise."""
    arg = (text or "").strip().lower()
    kind = _ALIASES.get(arg) or next((k for k in LEARN_KINDS if k == arg), None)
    if kind is None:
        raise BadInputError(f"onbekend formaat '{arg[:50]}': kies article, slides of infographic")
    return kind


class LearningCalls:
    """Weekly topic and content over the bus and the store."""

    def __init__(self, ctx: CoreContext) -> None:
        self.ctx = ctx

    async def weekly_topic(self, user_id: str) -> WeeklyTopic:
        """This week's topic of the user; NotFoundError when the graph has none yet."""
        found = weekly_topic_of(await quiz_status(self.ctx, user_id=user_id))
        if found is None:
            raise NotFoundError("er is nog geen onderwerp: de kennisgraaf is leeg")
        return found

    async def topic(self, topic_id: str) -> Topic:
        """A topic by id; NotFoundError when it does not exist."""
        topic = await self.ctx.store.topics.get(topic_id)
        if topic is None:
            raise NotFoundError(f"onderwerp {topic_id} bestaat niet")
        return topic

    async def content(self, topic_id: str) -> Content | None:
        """The stored content of a topic (None before any was made)."""
        return await self.ctx.store.content.get(topic_id)

    async def request_content(
        self,
        *,
        user_id: str,
        topic_id: str,
        kind: ContentType,
        reply_to: dict[str, Any],
        force: bool = False,
    ) -> ContentRequested:
        """Ask the content service for a topic's content; content.ready answers later."""
        event = ContentRequested(
            actor=user_id,
            user_id=user_id,
            topic_id=topic_id,
            content_type=kind,
            force=force,
            reply_to={"request_id": new_request_id(), **reply_to},
        )
        await self.ctx.publish(event)
        return event

    async def refine(self, *, topic_id: str, instructions: str, user_id: str) -> RefineReply:
        """An admin's small patch to a topic's article (rpc.content.refine)."""
        ctx = self.ctx
        ctx.require_admin(user_id, "artikelen verfijnen")
        if not instructions.strip():
            raise BadInputError("schrijf op wat er anders moet")
        req = RefineRequest(
            topic=topic_id,
            instruction=instructions.strip()[:MAX_INSTRUCTION_CHARS],
            user_id=user_id,
        )
        return await request(
            ctx.broker,
            REFINE_SUBJECT,
            req,
            response_model=RefineReply,
            timeout=ctx.chat_timeout,
            namespace=ctx.namespace,
        )
