"""Reading Slack interaction payloads, and answering the message that was clicked."""

from __future__ import annotations

import re
from collections.abc import Callable, Coroutine
from typing import Any

from slack_bolt.async_app import AsyncApp

from services.gateway.slack.api import Blocks
from services.gateway.slack.blocks.kit import check_blocks
from services.gateway.slack.gateway import Reply, SlackGateway


def user_of(body: dict[str, Any]) -> str:
    """The clicking user's id."""
    return str((body.get("user") or {}).get("id", ""))


def message_blocks(body: dict[str, Any]) -> Blocks:
    """The clicked message's blocks ([] for ephemeral messages, which Slack does not send)."""
    return [b for b in (body.get("message") or {}).get("blocks") or [] if isinstance(b, dict)]


def container(body: dict[str, Any]) -> tuple[str, str, bool]:
    """(channel, message ts, ephemeral?) of the clicked message."""
    box = body.get("container") or {}
    channel = box.get("channel_id") or (body.get("channel") or {}).get("id") or ""
    return str(channel), str(box.get("message_ts") or ""), bool(box.get("is_ephemeral"))


def action_value(body: dict[str, Any]) -> tuple[str, str]:
    """(action_id, value) of the first action."""
    action = (body.get("actions") or [{}])[0]
    return str(action.get("action_id", "")), str(action.get("value", ""))


def interaction_reply(gw: SlackGateway, body: dict[str, Any], respond: Any) -> Reply:
    """Replace the clicked message (chat.update; response_url if ephemeral), or reply privately."""
    channel, ts, ephemeral = container(body)
    user = user_of(body)

    async def update(blocks: Blocks, text: str) -> None:
        if ts and channel and not ephemeral:
            await gw.api.update(channel, ts, blocks, text=text)
        else:
            await respond(blocks=check_blocks(blocks), text=text, replace_original=True)

    async def private(text: str) -> None:
        if body.get("response_url"):
            await respond(text=text, response_type="ephemeral", replace_original=False)
        elif channel:
            await gw.api.ephemeral(channel, user, text)

    return Reply(update=update, private=private)


def respond_fn(respond: Any) -> Any:
    """A slash command's `respond` as (blocks, text) → ephemeral reply."""

    async def send(blocks: Blocks, text: str) -> None:
        await respond(blocks=check_blocks(blocks), text=text, response_type="ephemeral")

    return send


def text_input(view: dict[str, Any], block: str, action: str) -> str:
    """The value of a plain-text input ('' when absent)."""
    values = (view.get("state") or {}).get("values") or {}
    return str(((values.get(block) or {}).get(action) or {}).get("value") or "")


def checked(view: dict[str, Any], block: str, action: str) -> set[str]:
    """The selected values of a checkboxes input."""
    values = (view.get("state") or {}).get("values") or {}
    chosen = ((values.get(block) or {}).get(action) or {}).get("selected_options") or []
    return {str(o.get("value")) for o in chosen if isinstance(o, dict)}


ClickFlow = Callable[[dict[str, Any], Reply], Coroutine[Any, Any, None]]


def on_click(
    app: AsyncApp, gw: SlackGateway, action_id: str | re.Pattern[str], flow: ClickFlow, *, name: str
) -> None:
    """A button: ack at once, then `flow(body, reply)` runs in the background."""

    async def clicked(ack: Any, body: dict[str, Any], respond: Any) -> None:
        await ack()
        gw.background.spawn(flow(body, interaction_reply(gw, body, respond)), name=name)

    app.action(action_id)(clicked)
