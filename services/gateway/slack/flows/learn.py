"""/learn in Slack: a placeholder in the DM, content.requested, then the content in its place."""

from __future__ import annotations

import base64
import binascii
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from services.gateway.core import user_message
from services.gateway.slack.api import Blocks
from services.gateway.slack.blocks import learn as bl
from services.gateway.slack.blocks.kit import escape, notice_blocks
from services.gateway.slack.gateway import SlackGateway
from shared.bus import ContentReady, ContentType
from shared.errors import R42Error

log = logging.getLogger(__name__)

Respond = Callable[[Blocks, str], Awaitable[None]]
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
MAX_PNG_BASE64 = 20 * 1024 * 1024


async def learn(
    gw: SlackGateway, *, user: str, kind: ContentType, topic_id: str | None = None
) -> None:
    """Post a placeholder in the user's DM and ask the content service for the content."""
    channel = await gw.api.dm_channel(user)
    try:
        weekly = await gw.client.learning.weekly_topic(user)
        topic_id = topic_id or weekly.topic_id
        topic = await gw.client.learning.topic(topic_id)
    except R42Error as exc:
        await gw.notify(channel, user_message(exc))
        return
    ts = await gw.api.post(
        channel, bl.content_pending_blocks(label=topic.label, kind=kind), text="Even geduld…"
    )
    await gw.client.learning.request_content(
        user_id=user,
        topic_id=topic_id,
        kind=kind,
        reply_to=gw.reply_to(channel=channel, user=user, ts=ts, week=weekly.week),
    )


async def on_content_ready(gw: SlackGateway, event: ContentReady) -> None:
    """Replace the placeholder with the article, the first slide or the infographic."""
    rt = event.reply_to
    channel, ts, user = rt.get("channel"), rt.get("ts"), str(rt.get("user", ""))
    if not channel or not ts:
        log.warning("content.ready %s without a Slack message to update", event.event_id)
        return
    if not event.ok:
        text = f":warning: De inhoud kon niet worden gemaakt: {escape(event.error or '?')}"
        await gw.api.update(channel, ts, notice_blocks(text), text=text)
        return
    await show_content(
        gw,
        channel=channel,
        ts=ts,
        user=user,
        topic_id=event.topic_id,
        kind=event.content_type,
        week=str(rt.get("week", "")),
    )


async def show_content(
    gw: SlackGateway,
    *,
    channel: str,
    ts: str,
    user: str,
    topic_id: str,
    kind: str,
    week: str,
    slide: int = 0,
) -> None:
    """Render stored content of a topic into an existing message."""
    content = await gw.client.learning.content(topic_id)
    kind = "article" if kind == "all" else kind
    part = getattr(content, kind, None) if content is not None else None
    if not isinstance(part, dict):
        text = "Deze inhoud is er (nog) niet."
        await gw.api.update(channel, ts, notice_blocks(text), text=text)
        return
    if kind == "article":
        blocks = bl.article_blocks(
            part, topic_id=topic_id, week=week or "-", admin=gw.client.is_admin(user)
        )
    elif kind == "slides":
        blocks = bl.slide_blocks(part, topic_id=topic_id, index=slide)
    else:
        png = stored_png(part)
        blocks = bl.infographic_blocks(part, topic_id=topic_id, with_image=png is not None)
        await gw.api.update(channel, ts, blocks, text="Infographic")
        if png is not None:
            await gw.api.upload_png(
                channel,
                png,
                filename=f"{topic_id}.png",
                title=str(part.get("headline") or "Infographic"),
            )
        return
    await gw.api.update(channel, ts, blocks, text=bl.KIND_LABELS.get(kind, kind))


def stored_png(info: dict[str, Any]) -> bytes | None:
    """The PNG the content service stored with an infographic (None when absent or not a PNG)."""
    image = info.get("image")
    data = image.get("base64") if isinstance(image, dict) else None
    if not isinstance(data, str) or len(data) > MAX_PNG_BASE64:
        return None
    try:
        png = base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        log.warning("stored infographic image is not valid base64")
        return None
    return png if png.startswith(PNG_SIGNATURE) else None


async def refine_submitted(
    gw: SlackGateway, *, user: str, topic_id: str, instructions: str, channel: str | None
) -> None:
    """The Refine modal was submitted: patch the article and say what changed."""
    channel = channel or await gw.api.dm_channel(user)
    try:
        result = await gw.client.learning.refine(
            topic_id=topic_id, instructions=instructions, user_id=user
        )
        changes = "; ".join(escape(op) for op in result.applied[:10]) or "geen wijzigingen"
        text = f":pencil2: Artikel over `{escape(result.topic_id)}` verfijnd: {changes}"
    except Exception as exc:
        text = f":warning: Niet verfijnd: {user_message(exc)}"
    await gw.notify(channel, text)
