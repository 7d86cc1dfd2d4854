"""An admin's "Quizbank opnieuw maken" on a topic card: the quiz service's regenerate path.

The same path as `r42 quiz bank regenerate`: admin status is checked in core and again by the
quiz service against their admin lists (never the click), every attempt is audited, and a batch
the quality gate refuses leaves the bank as it was, with the reason and a Retry button.
"""

from __future__ import annotations

import logging

from services.gateway.core import user_message
from services.gateway.slack.blocks import quiz as bq
from services.gateway.slack.blocks.kit import escape
from services.gateway.slack.gateway import SlackGateway

log = logging.getLogger(__name__)


async def regenerate_click(gw: SlackGateway, *, user: str, topic_id: str, channel: str) -> None:
    """Say it is working, regenerate, then show the outcome to the clicker only."""
    if not topic_id or not channel:
        log.warning("quiz bank click from %s without a topic or channel", user)
        return
    if gw.client.is_admin(user):
        working = bq.BANK_WORKING.format(topic=escape(topic_id))
        await gw.api.ephemeral(channel, user, working)
    try:
        reply = await gw.client.quiz.regenerate_bank(
            user_id=user, topic_id=topic_id, surface="slack"
        )
    except Exception as exc:
        await gw.api.ephemeral(channel, user, user_message(exc))
        return
    blocks, text = bq.bank_outcome_blocks(topic_id, reply)
    await gw.api.ephemeral(channel, user, text, blocks)
