"""Slash commands and admin flows: /learn, /quiz, /leaderboard, /r42 …, ingest, uploads, sources."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any

from services.gateway import blocks_admin as ba
from services.gateway import blocks_chat as bc
from services.gateway import blocks_learn as bl
from services.gateway import blocks_quiz as bq
from services.gateway import slack_learn
from services.gateway.blocks_home import home_view
from services.gateway.handbook import describe_sync, sync_handbook
from services.gateway.models import Progress
from services.gateway.slack_api import Blocks
from services.gateway.slack_gateway import Reply, SlackGateway, user_message
from services.gateway.slack_quiz import start_quiz
from services.gateway.text import escape, number
from services.gateway.uploads import check_text
from shared.bus import SourceFailed, SourceProgress
from shared.errors import BadInputError, BusError, R42Error

log = logging.getLogger(__name__)

Respond = Callable[[Blocks, str], Awaitable[None]]
LEARN_KINDS = ("article", "slides", "infographic")
UPLOAD_KEY = "gateway:upload:{source_id}"


def parse_learn(text: str) -> str:
    """The content kind of a /learn argument (article by default); BadInputError otherwise."""
    arg = (text or "").strip().lower()
    aliases = {"": "article", "artikel": "article", "dia's": "slides", "slide": "slides"}
    kind = aliases.get(arg, arg)
    if kind not in LEARN_KINDS:
        raise BadInputError(
            f"onbekend formaat '{escape(arg[:50])}': kies article, slides of infographic"
        )
    return kind


async def learn_command(gw: SlackGateway, *, user: str, text: str, respond: Respond) -> None:
    """/learn [article|slides|infographic]: the content arrives in the user's DM."""
    try:
        kind = parse_learn(text)
    except BadInputError as exc:
        await respond(bc.notice_blocks(str(exc)), str(exc))
        return
    await slack_learn.learn(gw, user=user, kind=kind)  # type: ignore[arg-type]


async def quiz_command(gw: SlackGateway, *, user: str) -> None:
    """/quiz: this week's quiz, in the user's DM."""
    await start_quiz(gw, user=user)


async def leaderboard_command(gw: SlackGateway, *, user: str, respond: Respond) -> None:
    """/leaderboard: weekly and all-time."""
    boards = await gw.client.leaderboards()
    blocks = bq.leaderboard_blocks(
        week=boards.week, weekly=boards.weekly, all_time=boards.all_time, me=user
    )
    await respond(blocks, "Ranglijst")


async def r42_command(
    gw: SlackGateway,
    *,
    user: str,
    text: str,
    channel: str,
    trigger_id: str | None,
    respond: Respond,
) -> None:
    """/r42 help | clear | ingest | sources | suggestions | diagnostics | graph TOPIC."""
    sub, _, rest = (text or "").strip().partition(" ")
    sub = sub.lower()
    client = gw.client
    try:
        if sub in ("", "help", "hulp"):
            await respond(ba.help_blocks(), "R42 help")
        elif sub == "clear":
            cleared = await client.clear(user_id=user)
            text_out = f"Je gesprek is gewist ({cleared.removed} berichten). {cleared.greeting}"
            await respond(bc.notice_blocks(escape(text_out)), text_out)
        elif sub == "ingest":
            client.require_admin(user, "bronnen toevoegen")
            if not trigger_id:
                raise BadInputError("dit commando heeft een trigger nodig; probeer het opnieuw")
            await gw.api.open_view(trigger_id, ba.ingest_modal(channel=channel))
        elif sub == "sources":
            sources = await client.sources()
            await respond(ba.sources_blocks(sources, admin=client.is_admin(user)), "Bronnen")
        elif sub == "suggestions":
            pending = await client.pending_suggestions(user_id=user)
            await respond(ba.suggestions_blocks(pending), "Openstaande voorstellen")
        elif sub == "diagnostics":
            diag = await client.diagnostics(user_id=user)
            await respond(ba.diagnostics_blocks(diag), "Diagnostiek")
        elif sub == "graph":
            view = await client.graph(rest)
            await respond(ba.graph_blocks(view), view.topic.label)
        else:
            hint = f"Onbekend commando `{escape(sub[:50])}`."
            await respond([bc.section(hint), *ba.help_blocks()], hint)
    except Exception as exc:
        message = user_message(exc)
        await respond(bc.notice_blocks(escape(message)), message)


async def graph_follow(gw: SlackGateway, *, topic_id: str, reply: Reply) -> None:
    """A neighbour button: show that topic instead."""
    try:
        view = await gw.client.graph(topic_id)
    except R42Error as exc:
        await reply.private(user_message(exc))
        return
    await reply.update(ba.graph_blocks(view), view.topic.label)


async def cancel_source(gw: SlackGateway, *, user: str, source_id: str, reply: Reply) -> None:
    """A Cancel button on the sources list (admins only)."""
    try:
        source = await gw.client.cancel_source(source_id=source_id, user_id=user)
    except R42Error as exc:
        await reply.private(user_message(exc))
        return
    await reply.private(f"Annuleren van {escape(source.name)} is gevraagd.")


async def ingest_text(
    gw: SlackGateway, *, user: str, name: str, text: str, channel: str | None = None
) -> None:
    """Ingest pasted or uploaded text; the progress message goes to `channel` (else the DM)."""
    channel = channel or await gw.api.dm_channel(user)
    try:
        result = await gw.client.ingest_text(name=name, text=text, user_id=user)
    except Exception as exc:
        await gw.notify(
            channel, f":warning: {escape(name[:200])} is niet ingelezen: {user_message(exc)}"
        )
        return
    src = result.source
    if result.duplicate:
        await gw.notify(
            channel, f"Deze tekst is al ingelezen als *{escape(src.name)}* ({src.status})."
        )
        return
    started = Progress(state="running")
    ts = await gw.api.post(channel, ba.progress_blocks(src.name, started), text="Bron inlezen…")
    await gw.store.settings.set(
        UPLOAD_KEY.format(source_id=src.id), {"channel": channel, "ts": ts, "name": src.name}
    )


async def handbook_sync(gw: SlackGateway, *, user: str) -> None:
    """Ask the extractor to sync the GitHub handbook; the outcome goes to the admin's DM."""
    channel = await gw.api.dm_channel(user)
    await gw.notify(channel, ":arrows_counterclockwise: De handboek-synchronisatie is gestart…")
    try:
        reply = await sync_handbook(gw.client, user_id=user)
        text = f":white_check_mark: {escape(describe_sync(reply))}"
    except BusError as exc:
        text = f":warning: {escape(str(exc))}"
    except Exception as exc:
        text = f":warning: De synchronisatie mislukte: {user_message(exc)}"
    await gw.notify(channel, text)


async def upload(gw: SlackGateway, *, user: str, file_id: str, channel: str) -> None:
    """A file shared with R42 in a DM: admins' text files are ingested, anything else refused."""
    if not gw.client.is_admin(user):
        await gw.notify(channel, "Alleen beheerders kunnen bronnen toevoegen.")
        return
    try:
        info = await gw.api.file_info(file_id)
        name = str(info.get("name") or info.get("title") or file_id)
        limit = gw.client.settings.max_upload_bytes
        size = int(info.get("size") or 0)
        if size > limit:
            raise BadInputError(
                f"{name} is {number(size)} bytes; het maximum is {number(limit)} bytes"
            )
        url = info.get("url_private_download") or info.get("url_private")
        if not url:
            raise BadInputError(f"{name} kan niet worden gedownload")
        data = await gw.api.download(str(url), max_bytes=limit)
        text = check_text(data, max_bytes=limit)
    except Exception as exc:
        await gw.notify(channel, f":warning: Het bestand is niet ingelezen: {user_message(exc)}")
        return
    await ingest_text(gw, user=user, name=name, text=text, channel=channel)


async def on_source_event(gw: SlackGateway, event: SourceProgress | SourceFailed) -> None:
    """source.progress / completed / failed: update that upload's progress message.

    Progress and the final outcome arrive on separate consumers, so a late progress update
    could land after the final one; the final state is kept on the mapping and re-applied.
    """
    key = UPLOAD_KEY.format(source_id=event.source_id)
    where: dict[str, Any] | None = await gw.store.settings.get(key)
    if not where:
        return  # not uploaded through Slack (CLI, console, handbook sync)
    if where.get("final"):
        return
    progress = Progress.of(event)
    if progress.final:
        where = await gw.store.settings.update(
            key, lambda cur: {**(cur or where), "final": True, "outcome": _dump(progress)}
        )
    await _show_progress(gw, where, progress)
    if not progress.final:
        latest = await gw.store.settings.get(key) or {}
        if latest.get("final") and isinstance(latest.get("outcome"), dict):
            await _show_progress(gw, latest, Progress(**latest["outcome"]))


def _dump(progress: Progress) -> dict[str, Any]:
    return dict(progress.__dict__)


async def _show_progress(gw: SlackGateway, where: dict[str, Any], progress: Progress) -> None:
    name = str(where.get("name", ""))
    await gw.api.update(
        str(where["channel"]),
        str(where["ts"]),
        ba.progress_blocks(name, progress),
        text=ba.progress_text(name, progress),
    )


async def publish_home(gw: SlackGateway, *, user: str) -> None:
    """App Home: views.publish with this user's data."""
    data = await gw.client.home(user_id=user)
    await gw.api.publish_home(user, home_view(data, user_id=user))


async def refine_submitted(
    gw: SlackGateway, *, user: str, topic_id: str, instructions: str, channel: str | None
) -> None:
    """The Refine modal was submitted: patch the article and say what changed."""
    channel = channel or await gw.api.dm_channel(user)
    try:
        result = await gw.client.refine(topic_id=topic_id, instructions=instructions, user_id=user)
        changes = "; ".join(escape(op) for op in result.applied[:10]) or "geen wijzigingen"
        text = f":pencil2: Artikel over `{escape(result.topic_id)}` verfijnd: {changes}"
    except Exception as exc:
        text = f":warning: Niet verfijnd: {user_message(exc)}"
    await gw.notify(channel, text)


def slide_target(value: str) -> tuple[str, int] | None:
    """(topic, index) of a slide navigation button."""
    return bl.parse_slide_value(value)
