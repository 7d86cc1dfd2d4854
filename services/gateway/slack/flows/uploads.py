"""Sources from Slack: pasted text, files shared in a DM, and the progress message per upload."""

from __future__ import annotations

import logging
from typing import Any

from services.gateway.core import user_message
from services.gateway.core.models import Progress
from services.gateway.core.text import number
from services.gateway.core.uploads import check_text
from services.gateway.slack import upload_records
from services.gateway.slack.blocks import admin as ba
from services.gateway.slack.blocks.kit import escape
from services.gateway.slack.gateway import SlackGateway
from shared.bus import SourceFailed, SourceProgress
from shared.errors import BadInputError

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
    await upload_records.remember(
        gw.client.ctx.store, src.id, {"channel": channel, "ts": ts, "name": src.name}
    )


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
    could land after the final one; the final state is kept on the record and re-applied.
    """
    store = gw.client.ctx.store
    where = await upload_records.find(store, event.source_id)
    if not where:
        return  # not uploaded through Slack (CLI, console, handbook sync)
    if where.get("final"):
        return
    progress = Progress.of(event)
    if progress.final:
        outcome = dict(progress.__dict__)
        first = where
        where = await upload_records.change(
            store,
            event.source_id,
            lambda cur: {**(cur or first), "final": True, "outcome": outcome},
        )
    await _show_progress(gw, where, progress)
    if not progress.final:
        latest = await upload_records.find(store, event.source_id) or {}
        if latest.get("final") and isinstance(latest.get("outcome"), dict):
            await _show_progress(gw, latest, Progress(**latest["outcome"]))


async def _show_progress(gw: SlackGateway, where: dict[str, Any], progress: Progress) -> None:
    name = str(where.get("name", ""))
    await gw.api.update(
        str(where["channel"]),
        str(where["ts"]),
        ba.progress_blocks(name, progress),
        text=ba.progress_text(name, progress),
    )
