"""Sources from Slack: pasted text, files shared in a DM, and the progress message per upload."""

from __future__ import annotations

import logging
from typing import Any

from services.gateway.core import user_message
from services.gateway.core.models import Progress
from services.gateway.core.text import number
from services.gateway.core.uploads import check_text
from services.gateway.slack.blocks import admin as ba
from services.gateway.slack.blocks.kit import escape, strip_mentions
from services.gateway.slack.gateway import SlackGateway
from shared.bus import SourceFailed, SourceProgress
from shared.errors import BadInputError
from shared.store import UploadMessage

log = logging.getLogger(__name__)


async def ingest_text(
    gw: SlackGateway, *, user: str, name: str, text: str, channel: str | None = None
) -> None:
    """Ingest pasted or uploaded text; the progress message goes to `channel` (else the DM)."""
    channel = channel or await gw.api.dm_channel(user)
    try:
        result = await gw.client.sources.ingest_text(name=name, text=text, user_id=user)
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
    await gw.client.ctx.store.upload_messages.put(
        UploadMessage(source_id=src.id, channel=channel, ts=ts, name=src.name)
    )


NOT_AN_ADMIN = (
    "Alleen beheerders kunnen bronnen toevoegen. Stel je vraag gerust in tekst, "
    "dan zoek ik het antwoord op in het handboek."
)


async def shared_in_dm(gw: SlackGateway, event: dict[str, Any]) -> None:
    """A DM with files (message subtype file_share): admins' files are ingested.

    A person who is not an admin hears why only when the message has no question to answer.
    """
    user, channel = str(event.get("user", "")), str(event.get("channel", ""))
    files = [f for f in event.get("files") or [] if isinstance(f, dict) and f.get("id")]
    if not gw.client.is_admin(user):
        if not strip_mentions(str(event.get("text") or "")):
            await gw.notify(channel, NOT_AN_ADMIN)
        return
    for f in files[:10]:
        if await gw.deduper.claim(f"file:{f['id']}"):  # file_shared may bring it too
            await upload(gw, user=user, file_id=str(f["id"]), channel=channel)


async def upload(gw: SlackGateway, *, user: str, file_id: str, channel: str) -> None:
    """A file shared with R42 in a DM by an admin: text files are ingested, others refused."""
    if not gw.client.is_admin(user):
        return  # the file_share message says why (or answers the question with it)
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
        text = check_text(data, max_bytes=limit, name=name)
    except Exception as exc:
        await gw.notify(channel, f":warning: Het bestand is niet ingelezen: {user_message(exc)}")
        return
    await ingest_text(gw, user=user, name=name, text=text, channel=channel)


async def on_source_event(gw: SlackGateway, event: SourceProgress | SourceFailed) -> None:
    """source.progress / completed / failed: update that upload's progress message.

    Progress and the final outcome arrive on separate consumers, so a late progress update
    could land after the final one; the final outcome is kept on the record and re-applied.
    """
    uploads = gw.client.ctx.store.upload_messages
    where = await uploads.get(event.source_id)
    if where is None or where.final:
        return  # not uploaded through Slack (CLI, console, handbook sync), or already final
    progress = Progress.of(event)
    if progress.final:
        finished = await uploads.finish(event.source_id, dict(progress.__dict__))
        if finished is not None:  # None: another delivery finished it first
            await _show_progress(gw, finished, progress)
        return
    await _show_progress(gw, where, progress)
    latest = await uploads.get(event.source_id)
    if latest is not None and latest.final and isinstance(latest.outcome, dict):
        await _show_progress(gw, latest, Progress(**latest.outcome))


async def _show_progress(gw: SlackGateway, where: UploadMessage, progress: Progress) -> None:
    await gw.api.update(
        where.channel,
        where.ts,
        ba.progress_blocks(where.name, progress),
        text=ba.progress_text(where.name, progress),
    )
