"""Assistant-view listeners (Bolt's AsyncAssistant): thread started, questions in a thread.

Bolt treats every DM reply inside a thread as an assistant-thread message, so a question in
a DM thread is answered here too (in its thread, with its own memory).
"""

from __future__ import annotations

import logging
from typing import Any

from slack_bolt.async_app import AsyncApp
from slack_bolt.middleware.assistant.async_assistant import AsyncAssistant

from services.gateway.slack.flows import assistant as flow
from services.gateway.slack.flows.chat import turn_id
from services.gateway.slack.gateway import SlackGateway

log = logging.getLogger(__name__)


def register(app: AsyncApp, gw: SlackGateway) -> None:
    """The assistant middleware (before the plain DM listener sees a thread message)."""
    assistant = AsyncAssistant(logger=logging.getLogger("services.gateway.bolt.assistant"))
    bg = gw.background

    @assistant.thread_started
    async def started(payload: dict[str, Any]) -> None:
        thread = payload.get("assistant_thread") or {}
        channel, thread_ts = str(thread.get("channel_id", "")), str(thread.get("thread_ts", ""))
        user = str(thread.get("user_id", ""))
        if channel and thread_ts:
            greeting = flow.greet(gw, channel=channel, thread_ts=thread_ts, user=user)
            bg.spawn(greeting, name="assistant-hi")

    @assistant.thread_context_changed
    async def context_changed(payload: dict[str, Any]) -> None:
        # R42 answers from the handbook only; the channel the user looks at changes nothing.
        log.debug("assistant context changed in %s", payload.get("assistant_thread", {}))

    @assistant.user_message
    async def question(payload: dict[str, Any], body: dict[str, Any]) -> None:
        key = turn_id(body, payload)

        async def run() -> None:
            if not await gw.deduper.claim(f"msg:{key}"):
                log.info("duplicate delivery of %s dropped", key)
                return
            await flow.answer(
                gw,
                user=str(payload.get("user", "")),
                channel=str(payload.get("channel", "")),
                thread_ts=str(payload.get("thread_ts", "")),
                text=str(payload.get("text") or ""),
                correlation=key,
                team=str(body.get("team_id") or payload.get("team") or "") or None,
            )

        bg.spawn(run(), name="assistant-question")

    app.assistant(assistant)
