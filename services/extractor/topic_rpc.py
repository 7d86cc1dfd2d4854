"""The extractor's topic rpcs: admin actions (`rpc.extractor.topic`) and cards."""

from __future__ import annotations

from services.extractor.handlers import ExtractorDeps
from services.extractor.topic_cards import topic_card
from services.extractor.topic_edits import answer_topic_action
from shared.bus.topic_rpc import (
    TOPIC_ACTION_SUBJECT,
    TOPIC_CARD_SUBJECT,
    TopicAction,
    TopicCardReply,
    TopicCardRequest,
    TopicReply,
)
from shared.runtime.service import Rpc


def topic_rpcs(deps: ExtractorDeps) -> list[Rpc]:
    """Rpc servers for topic actions (one at a time: they read, then write) and cards."""

    async def on_action(request: TopicAction) -> TopicReply:
        return await answer_topic_action(
            request, store=deps.store, publish=deps.publish, is_admin=deps.is_admin
        )

    async def on_card(request: TopicCardRequest) -> TopicCardReply:
        return await topic_card(store=deps.store, settings=deps.settings, query=request.query)

    return [
        Rpc(TOPIC_ACTION_SUBJECT, TopicAction, on_action, max_concurrency=1),
        Rpc(TOPIC_CARD_SUBJECT, TopicCardRequest, on_card, max_concurrency=4),
    ]
