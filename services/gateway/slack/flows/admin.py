"""/r42 and its admin flows: help, clear, ingest, sources, suggestions, diagnostics, graph, Home."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable

from services.gateway.core import user_message
from services.gateway.core.sources import describe_sync
from services.gateway.slack.api import Blocks
from services.gateway.slack.blocks import admin as ba
from services.gateway.slack.blocks.home import home_view
from services.gateway.slack.blocks.kit import escape, notice_blocks, section
from services.gateway.slack.flows import analyze, curriculum, reviews, stale, topics
from services.gateway.slack.flows.chat import conversation_key
from services.gateway.slack.gateway import Reply, SlackGateway
from shared.errors import BadInputError, BusError, R42Error

log = logging.getLogger(__name__)

Respond = Callable[[Blocks, str], Awaitable[None]]


async def r42_command(
    gw: SlackGateway,
    *,
    user: str,
    text: str,
    channel: str,
    trigger_id: str | None,
    respond: Respond,
) -> None:
    """/r42 help | clear | ingest | sources | suggestions | analyze | diagnostics | graph TOPIC."""
    sub, _, rest = (text or "").strip().partition(" ")
    sub = sub.lower()
    client = gw.client
    try:
        if sub in ("", "help", "hulp"):
            await respond(ba.help_blocks(), "R42 help")
        elif sub == "clear":
            dm = conversation_key(channel) if channel.startswith("D") else None
            await respond(*ba.clear_prompt(dm))
        elif sub == "ingest":
            client.require_admin(user, "bronnen toevoegen")
            if not trigger_id:
                raise BadInputError("dit commando heeft een trigger nodig; probeer het opnieuw")
            await gw.api.open_view(trigger_id, ba.ingest_modal(channel=channel))
        elif sub == "sources":
            sources = await client.sources.list()
            await respond(ba.sources_blocks(sources, admin=client.is_admin(user)), "Bronnen")
        elif sub == "suggestions":
            await respond(*await reviews.suggestions_list(gw, user=user))
        elif sub == "stale":
            await stale.show(gw, user=user, respond=respond)
        elif sub == "curriculum":
            await curriculum.show(gw, user=user, respond=respond)
        elif sub == "analyze":
            await analyze.analyze(gw, user=user, respond=respond)
        elif sub == "diagnostics":
            diag = await client.reads.diagnostics(user_id=user)
            await respond(ba.diagnostics_blocks(diag), "Diagnostiek")
        elif sub in ("topic", "onderwerp"):
            await topics.topic_command(gw, user=user, query=rest, channel=channel, respond=respond)
        elif sub == "graph":
            view = await client.reads.graph(rest)
            await respond(ba.graph_blocks(view), view.topic.label)
        else:
            hint = f"Onbekend commando `{escape(sub[:50])}`."
            await respond([section(hint), *ba.help_blocks()], hint)
    except Exception as exc:
        message = user_message(exc)
        await respond(notice_blocks(escape(message)), message)


async def graph_follow(gw: SlackGateway, *, topic_id: str, reply: Reply) -> None:
    """A neighbour button: show that topic instead."""
    try:
        view = await gw.client.reads.graph(topic_id)
    except R42Error as exc:
        await reply.private(user_message(exc))
        return
    await reply.update(ba.graph_blocks(view), view.topic.label)


async def cancel_source(gw: SlackGateway, *, user: str, source_id: str, reply: Reply) -> None:
    """A Cancel button on the sources list (admins only)."""
    try:
        source = await gw.client.sources.cancel(source_id=source_id, user_id=user)
    except R42Error as exc:
        await reply.private(user_message(exc))
        return
    await reply.private(f"Annuleren van {escape(source.name)} is gevraagd.")


async def handbook_sync(gw: SlackGateway, *, user: str) -> None:
    """Ask the extractor to sync the GitHub handbook; the outcome goes to the admin's DM."""
    channel = await gw.api.dm_channel(user)
    await gw.notify(channel, ":arrows_counterclockwise: De handboek-synchronisatie is gestart…")
    try:
        reply = await gw.client.sources.sync_handbook(user_id=user)
        text = f":white_check_mark: {escape(describe_sync(reply))}"
    except BusError as exc:
        text = f":warning: {escape(str(exc))}"
    except Exception as exc:
        text = f":warning: De synchronisatie mislukte: {user_message(exc)}"
    await gw.notify(channel, text)


async def publish_home(gw: SlackGateway, *, user: str) -> None:
    """App Home: views.publish with this user's data."""
    data = await gw.client.reads.home(user_id=user)
    await gw.api.publish_home(user, home_view(data, user_id=user))
