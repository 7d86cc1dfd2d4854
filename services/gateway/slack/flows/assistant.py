"""Slack's assistant view: a greeting with suggested prompts, a title from the first question.

The prompts are this week's topic and what colleagues asked often lately (answered, and by
more than one person), topped up with fixed examples; Slack shows at most four.
"""

from __future__ import annotations

import logging

from services.gateway.slack.blocks.kit import notice_blocks, truncate
from services.gateway.slack.flows.chat import chat_turn
from services.gateway.slack.gateway import SlackGateway

log = logging.getLogger(__name__)

GREETING = (
    "Hoi! Ik ben R42. Ik beantwoord vragen uit het handboek van Respellion, "
    "met de bronnen erbij. Waar kan ik je mee helpen?"
)
PROMPTS_TITLE = "Probeer bijvoorbeeld"
EXAMPLES = [
    {"title": "Verlof aanvragen", "message": "Hoe vraag ik verlof aan?"},
    {"title": "Onkosten declareren", "message": "Hoe declareer ik onkosten?"},
]
PROMPTS = [
    *EXAMPLES,
    {"title": "Het onderwerp van deze week", "message": "Wat is het onderwerp van deze week?"},
]
"""The static prompts (the manifest's assistant view), for a thread whose user is unknown."""
MAX_PROMPTS = 4
MAX_TITLE = 75


def prompt(title: str, message: str) -> dict[str, str]:
    """One suggested prompt (a short title, the message it sends)."""
    return {"title": truncate(title, MAX_TITLE), "message": truncate(message, 500)}


async def suggested_prompts(gw: SlackGateway, *, user: str) -> list[dict[str, str]]:
    """This week's topic, then frequent questions, then examples (no duplicates, at most 4)."""
    prompts: list[dict[str, str]] = []
    try:
        weekly = await gw.client.learning.weekly_topic(user)
        prompts.append(prompt(f"Onderwerp van de week: {weekly.label}",
                              f"Wat moet ik weten over {weekly.label}?"))  # fmt: skip
    except Exception as exc:  # no topic yet, or the quiz service is away: prompts still come
        log.info("no weekly topic for the assistant's prompts: %s", exc)
    try:
        asked = await gw.client.reads.frequent_questions(limit=2)
    except Exception as exc:
        log.info("no frequent questions for the assistant's prompts: %s", exc)
        asked = []
    prompts += [prompt(q, q) for q in asked]
    seen = {p["message"].casefold() for p in prompts}
    prompts += [p for p in EXAMPLES if p["message"].casefold() not in seen]
    return prompts[:MAX_PROMPTS]


async def greet(gw: SlackGateway, *, channel: str, thread_ts: str, user: str = "") -> None:
    """assistant_thread_started: say hello in the thread and offer prompts."""
    await gw.api.post(channel, notice_blocks(GREETING), text=GREETING, thread_ts=thread_ts)
    prompts = await suggested_prompts(gw, user=user) if user else PROMPTS
    await gw.api.set_prompts(channel, thread_ts, prompts, title=PROMPTS_TITLE)


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
