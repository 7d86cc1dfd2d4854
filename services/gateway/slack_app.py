"""The Bolt AsyncApp: every listener acks at once and hands the slow work to a background task."""

from __future__ import annotations

import json
import logging
import re
from typing import Any

from slack_bolt.async_app import AsyncApp
from slack_sdk.web.async_client import AsyncWebClient

from services.gateway import actions as ids
from services.gateway import blocks_admin as ba
from services.gateway import blocks_learn as bl
from services.gateway import slack_commands as cmd
from services.gateway.limits import check_blocks
from services.gateway.slack_actions import register_actions
from services.gateway.slack_api import Blocks
from services.gateway.slack_gateway import SlackGateway

log = logging.getLogger(__name__)

LEARN_ACK = "Komt eraan: ik stuur het je in een DM."
QUIZ_ACK = "De quiz komt in je DM."


def _respond_fn(respond: Any) -> cmd.Respond:
    async def send(blocks: Blocks, text: str) -> None:
        await respond(blocks=check_blocks(blocks), text=text, response_type="ephemeral")

    return send


def build_app(
    gw: SlackGateway, *, client: AsyncWebClient, signing_secret: str | None, http: bool
) -> AsyncApp:
    """An AsyncApp with every R42 listener (request verification on in HTTP mode)."""
    app = AsyncApp(
        client=client,
        signing_secret=signing_secret or "",
        request_verification_enabled=http,
        name="r42-gateway",
        logger=logging.getLogger("services.gateway.bolt"),
    )
    _register_events(app, gw)
    _register_commands(app, gw)
    register_actions(app, gw)
    _register_views(app, gw)
    return app


def _register_events(app: AsyncApp, gw: SlackGateway) -> None:
    bg = gw.background

    async def chat(body: dict[str, Any], event: dict[str, Any], in_thread: bool) -> None:
        key = event.get("client_msg_id") or body.get("event_id") or ""
        if not await gw.deduper.claim(f"msg:{key}"):
            log.info("duplicate delivery of %s dropped", key)
            return
        thread_ts = event.get("thread_ts") or (event.get("ts") if in_thread else None)
        await gw.chat_turn(
            user=str(event.get("user", "")),
            channel=str(event.get("channel", "")),
            text=str(event.get("text") or ""),
            thread_ts=thread_ts,
            correlation=str(key or event.get("ts", "")),
        )

    @app.event("app_mention")
    async def on_mention(body: dict[str, Any], event: dict[str, Any]) -> None:
        bg.spawn(chat(body, event, in_thread=True), name="chat-mention")

    @app.event("message")
    async def on_message(body: dict[str, Any], event: dict[str, Any]) -> None:
        # Only plain DMs from people: edits, bot posts and file shares have their own paths.
        if event.get("channel_type") != "im" or event.get("subtype") or event.get("bot_id"):
            return
        if event.get("files"):
            return
        bg.spawn(chat(body, event, in_thread=False), name="chat-dm")

    @app.event("file_shared")
    async def on_file(body: dict[str, Any], event: dict[str, Any]) -> None:
        file_id = str(event.get("file_id") or (event.get("file") or {}).get("id") or "")
        channel = str(event.get("channel_id") or "")
        user = str(event.get("user_id") or "")
        if not file_id or not channel.startswith("D"):
            return  # only files shared with R42 in a DM

        async def run() -> None:
            if await gw.deduper.claim(f"file:{file_id}"):
                await cmd.upload(gw, user=user, file_id=file_id, channel=channel)

        bg.spawn(run(), name="upload")

    @app.event("app_home_opened")
    async def on_home(body: dict[str, Any], event: dict[str, Any]) -> None:
        if event.get("tab", "home") != "home" or not event.get("user"):
            return
        bg.spawn(cmd.publish_home(gw, user=str(event["user"])), name="home")

    @app.event(re.compile(".*"))
    async def on_other(event: dict[str, Any]) -> None:
        log.debug("ignoring event %s", event.get("type"))


def _register_commands(app: AsyncApp, gw: SlackGateway) -> None:
    bg = gw.background

    @app.command("/learn")
    async def learn(ack: Any, command: dict[str, Any], respond: Any) -> None:
        await ack(text=LEARN_ACK)
        bg.spawn(
            cmd.learn_command(
                gw,
                user=command["user_id"],
                text=command.get("text", ""),
                respond=_respond_fn(respond),
            ),
            name="learn",
        )

    @app.command("/quiz")
    async def quiz(ack: Any, command: dict[str, Any]) -> None:
        await ack(text=QUIZ_ACK)
        bg.spawn(cmd.quiz_command(gw, user=command["user_id"]), name="quiz")

    @app.command("/leaderboard")
    async def leaderboard(ack: Any, command: dict[str, Any], respond: Any) -> None:
        await ack()
        bg.spawn(
            cmd.leaderboard_command(gw, user=command["user_id"], respond=_respond_fn(respond)),
            name="leaderboard",
        )

    @app.command("/r42")
    async def r42(ack: Any, command: dict[str, Any], respond: Any) -> None:
        await ack()
        bg.spawn(
            cmd.r42_command(
                gw,
                user=command["user_id"],
                text=command.get("text", ""),
                channel=command.get("channel_id", ""),
                trigger_id=command.get("trigger_id"),
                respond=_respond_fn(respond),
            ),
            name="r42-command",
        )


def _input(view: dict[str, Any], block: str, action: str) -> str:
    values = (view.get("state") or {}).get("values") or {}
    return str(((values.get(block) or {}).get(action) or {}).get("value") or "")


def _checked(view: dict[str, Any], block: str, action: str) -> set[str]:
    values = (view.get("state") or {}).get("values") or {}
    chosen = ((values.get(block) or {}).get(action) or {}).get("selected_options") or []
    return {str(o.get("value")) for o in chosen if isinstance(o, dict)}


def _register_views(app: AsyncApp, gw: SlackGateway) -> None:
    bg = gw.background

    @app.view(ids.INGEST_VIEW)
    async def ingest(ack: Any, body: dict[str, Any], view: dict[str, Any]) -> None:
        user = str((body.get("user") or {}).get("id", ""))
        name = _input(view, ba.INGEST_NAME_BLOCK, ba.INGEST_NAME_ACTION).strip()
        text = _input(view, ba.INGEST_TEXT_BLOCK, ba.INGEST_TEXT_ACTION)
        sync = ba.INGEST_SYNC_VALUE in _checked(view, ba.INGEST_SYNC_BLOCK, ba.INGEST_SYNC_ACTION)
        errors = {}
        if text.strip() and not name:
            errors[ba.INGEST_NAME_BLOCK] = "Geef de bron een naam."
        if name and not text.strip():
            errors[ba.INGEST_TEXT_BLOCK] = "Plak de tekst van de bron."
        if not (name or text.strip() or sync):
            errors[ba.INGEST_TEXT_BLOCK] = "Plak een tekst of kies de handboek-synchronisatie."
        if not gw.client.is_admin(user):
            errors[ba.INGEST_TEXT_BLOCK] = "Alleen beheerders kunnen bronnen toevoegen."
        if errors:
            await ack(response_action="errors", errors=errors)
            return
        await ack()
        if text.strip():
            bg.spawn(cmd.ingest_text(gw, user=user, name=name, text=text), name="ingest")
        if sync:
            bg.spawn(cmd.handbook_sync(gw, user=user), name="handbook-sync")

    @app.view(ids.REFINE_VIEW)
    async def refine(ack: Any, body: dict[str, Any], view: dict[str, Any]) -> None:
        user = str((body.get("user") or {}).get("id", ""))
        instructions = _input(view, bl.REFINE_INPUT_BLOCK, bl.REFINE_INPUT_ACTION).strip()
        try:
            meta = json.loads(view.get("private_metadata") or "{}")
            topic_id = str(meta["t"])
        except (ValueError, KeyError, TypeError):
            await ack()
            log.warning("refine modal without a topic from %s", user)
            return
        if not instructions:
            await ack(
                response_action="errors",
                errors={bl.REFINE_INPUT_BLOCK: "Schrijf op wat er anders moet."},
            )
            return
        await ack()
        bg.spawn(
            cmd.refine_submitted(
                gw,
                user=user,
                topic_id=topic_id,
                instructions=instructions,
                channel=str(meta.get("c") or "") or None,
            ),
            name="refine",
        )

    @app.view(re.compile(".*"))
    async def unknown_view(ack: Any, view: dict[str, Any]) -> None:
        await ack()
        log.warning("ignoring unknown view %r", str(view.get("callback_id"))[:100])
