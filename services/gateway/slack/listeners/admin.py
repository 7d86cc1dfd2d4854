"""Admin listeners: /r42, App Home, files shared in a DM, the ingest modal, sources, graph."""

from __future__ import annotations

from typing import Any

from slack_bolt.async_app import AsyncApp

from services.gateway.slack import ids
from services.gateway.slack.blocks import admin as ba
from services.gateway.slack.flows import admin, uploads
from services.gateway.slack.gateway import Reply, SlackGateway
from services.gateway.slack.listeners.interactions import (
    action_value,
    checked,
    on_click,
    respond_fn,
    text_input,
    user_of,
)


def register(app: AsyncApp, gw: SlackGateway) -> None:
    """/r42, App Home, uploads and the admin buttons and modal."""
    _register_command_and_home(app, gw)
    _register_uploads(app, gw)
    _register_buttons(app, gw)


def _register_command_and_home(app: AsyncApp, gw: SlackGateway) -> None:
    bg = gw.background

    @app.command("/r42")
    async def r42(ack: Any, command: dict[str, Any], respond: Any) -> None:
        await ack()
        bg.spawn(
            admin.r42_command(
                gw,
                user=command["user_id"],
                text=command.get("text", ""),
                channel=command.get("channel_id", ""),
                trigger_id=command.get("trigger_id"),
                respond=respond_fn(respond),
            ),
            name="r42-command",
        )

    @app.event("app_home_opened")
    async def on_home(event: dict[str, Any]) -> None:
        if event.get("tab", "home") != "home" or not event.get("user"):
            return
        bg.spawn(admin.publish_home(gw, user=str(event["user"])), name="home")


def _register_uploads(app: AsyncApp, gw: SlackGateway) -> None:
    bg = gw.background

    @app.event("file_shared")
    async def on_file(event: dict[str, Any]) -> None:
        file_id = str(event.get("file_id") or (event.get("file") or {}).get("id") or "")
        channel = str(event.get("channel_id") or "")
        user = str(event.get("user_id") or "")
        if not file_id or not channel.startswith("D"):
            return  # only files shared with R42 in a DM

        async def run() -> None:
            if await gw.deduper.claim(f"file:{file_id}"):
                await uploads.upload(gw, user=user, file_id=file_id, channel=channel)

        bg.spawn(run(), name="upload")

    @app.view(ids.INGEST_VIEW)
    async def ingest(ack: Any, body: dict[str, Any], view: dict[str, Any]) -> None:
        user = user_of(body)
        name = text_input(view, ba.INGEST_NAME_BLOCK, ba.INGEST_NAME_ACTION).strip()
        text = text_input(view, ba.INGEST_TEXT_BLOCK, ba.INGEST_TEXT_ACTION)
        sync = ba.INGEST_SYNC_VALUE in checked(view, ba.INGEST_SYNC_BLOCK, ba.INGEST_SYNC_ACTION)
        errors = ingest_errors(name=name, text=text, sync=sync, admin=gw.client.is_admin(user))
        if errors:
            await ack(response_action="errors", errors=errors)
            return
        await ack()
        if text.strip():
            bg.spawn(uploads.ingest_text(gw, user=user, name=name, text=text), name="ingest")
        if sync:
            bg.spawn(admin.handbook_sync(gw, user=user), name="handbook-sync")


def ingest_errors(*, name: str, text: str, sync: bool, admin: bool) -> dict[str, str]:
    """What is wrong with an ingest modal submission, per input block."""
    errors = {}
    if text.strip() and not name:
        errors[ba.INGEST_NAME_BLOCK] = "Geef de bron een naam."
    if name and not text.strip():
        errors[ba.INGEST_TEXT_BLOCK] = "Plak de tekst van de bron."
    if not (name or text.strip() or sync):
        errors[ba.INGEST_TEXT_BLOCK] = "Plak een tekst of kies de handboek-synchronisatie."
    if not admin:
        errors[ba.INGEST_TEXT_BLOCK] = "Alleen beheerders kunnen bronnen toevoegen."
    return errors


def _register_buttons(app: AsyncApp, gw: SlackGateway) -> None:
    async def cancel(body: dict[str, Any], reply: Reply) -> None:
        await admin.cancel_source(gw, user=user_of(body), source_id=action_value(body)[1],
                                  reply=reply)  # fmt: skip

    async def follow(body: dict[str, Any], reply: Reply) -> None:
        await admin.graph_follow(gw, topic_id=action_value(body)[1], reply=reply)

    on_click(app, gw, ids.SOURCE_CANCEL_RE, cancel, name="cancel")
    on_click(app, gw, ids.GRAPH_FOLLOW_RE, follow, name="graph")
