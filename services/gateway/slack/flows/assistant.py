"""Slack's assistant view: a greeting with suggested prompts, a title from the first question."""

from __future__ import annotations

import logging

from services.gateway.slack.blocks.kit import notice_blocks
from services.gateway.slack.flows.chat import chat_turn
from services.gateway.slack.gateway import SlackGateway

log = logging.getLogger(__name__)

GREETING = (
    "Hoi! Ik ben R42. Ik beantwoord vragen uit het handboek van Respellion, "
    "met de bronnen erbij. Waar kan ik je mee helpen?"
)
PROMPTS_TITLE = "Probeer bijvoorbeeld"
PROMPTS = [
    {"title": "Verlof aanvragen", "message": "Hoe vraag ik verlof aan?"},
    {"title": "Onkosten declareren", "message": "Hoe declareer ik onkosten?"},
    {"title": "Het onderwerp van deze week", "message": "Wat is het onderwerp van deze week?"},
]


async def greet(gw: SlackGateway, *, channel: str, thread_ts: str) -> None:
    """assistant_thread_started: say hello in the thread and offer prompts."""
    await gw.api.post(channel, notice_blocks(GREETING), text=GREETING, thread_ts=thread_ts)
    await gw.api.set_prompts(channel, thread_ts, PROMPTS, title=PROMPTS_TITLE)


async def answer(
    gw: SlackGateway,
    *,
    user: str,
    channel: str,
    thread_ts: str,
    text: str,
    correlation: str,
    team: str | None = None,
) -> None:
    """A question in an assistant thread: title it once, then answer with a status."""
    if await gw.deduper.claim(f"title:{channel}:{thread_ts}"):
        try:
            await gw.api.set_title(channel, thread_ts, " ".join(text.split()) or "Vraag aan R42")
        except Exception as exc:  # a missing title must not cost the answer
            log.info("no title for %s/%s: %s", channel, thread_ts, exc)
    await chat_turn(
        gw,
        user=user,
        channel=channel,
        text=text,
        thread_ts=thread_ts,
        correlation=correlation,
        assistant=True,
        team=team,
    )
