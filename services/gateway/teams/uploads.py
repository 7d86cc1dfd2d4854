"""Uploads in a personal chat: Teams file attachments from admins become sources.

Teams delivers a file sent to a bot as an attachment of type
`application/vnd.microsoft.teams.file.download.info` with a short-lived `downloadUrl`.
The same rules as every other entry point apply (size, text, admins only) through the
client; progress events update the upload's card (the source id maps to it in the store).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

import aiohttp
from microsoft_agents.activity import Activity, ConversationReference

from services.gateway.core.text import SOURCE_STATUS_NL, dutch
from services.gateway.teams import cards
from services.gateway.teams.core import check_text, user_message
from services.gateway.teams.surface import TeamsGateway
from shared.errors import BadInputError
from shared.store import UploadMessage

log = logging.getLogger(__name__)

FILE_INFO = "application/vnd.microsoft.teams.file.download.info"
HOW_TO = (
    "Stuur me in een privégesprek een bestand (tekst, Markdown, HTML, PDF of DOCX); "
    "beheerders kunnen zo bronnen toevoegen."
)
TEAMS_CONVERSATION_PREFIXES = ("a:", "19:", "28:", "29:")
"""Teams conversation ids (personal a:…, channel and group 19:…); Slack channels differ."""


@dataclass(frozen=True)
class FileInfo:
    """One file sent to the bot."""

    name: str
    url: str
    file_type: str


def file_attachments(activity: Activity) -> list[FileInfo]:
    """The files attached to a message (other attachments, such as cards, are skipped)."""
    found = []
    for att in activity.attachments or []:
        content = att.content if isinstance(att.content, dict) else {}
        url = content.get("downloadUrl")
        if (
            att.content_type == FILE_INFO
            and isinstance(url, str)
            and url.startswith(("https://", "http://"))
        ):
            found.append(
                FileInfo(
                    name=str(att.name or "bestand"),
                    url=url,
                    file_type=str(content.get("fileType", "")),
                )
            )
    return found


async def download(url: str, *, max_bytes: int) -> bytes:
    """The file's bytes, refusing anything over the size limit before reading it all."""
    timeout = aiohttp.ClientTimeout(total=30)
    async with aiohttp.ClientSession(timeout=timeout) as session, session.get(url) as resp:
        if resp.status != 200:
            raise BadInputError(f"het bestand kon niet worden opgehaald (HTTP {resp.status})")
        if resp.content_length is not None and resp.content_length > max_bytes:
            raise BadInputError(f"het bestand is groter dan het maximum van {max_bytes} bytes")
        data = await resp.content.read(max_bytes + 1)
        if len(data) > max_bytes:
            raise BadInputError(f"het bestand is groter dan het maximum van {max_bytes} bytes")
        return data


async def handle(
    gw: TeamsGateway,
    *,
    ref: ConversationReference,
    user: str,
    files: list[FileInfo],
    personal: bool,
) -> None:
    """Ingest each file (admins, personal chat only) and remember where progress goes."""
    if not personal:
        await gw.notify(ref, "Bestanden kan ik alleen in een privégesprek aannemen.")
        return
    for info in files[:5]:
        try:
            gw.client.require_admin(user, "bronnen toevoegen")
            data = await download(info.url, max_bytes=gw.client.settings.max_upload_bytes)
            text = check_text(data, max_bytes=gw.client.settings.max_upload_bytes, name=info.name)
            result = await gw.client.sources.ingest_text(name=info.name, text=text, user_id=user)
        except Exception as exc:
            await gw.notify(ref, f"{info.name}: {user_message(exc)}", warning=True)
            continue
        if result.duplicate:
            await gw.notify(
                ref,
                f"{info.name} is al eerder toegevoegd "
                f"({dutch(result.source.status, SOURCE_STATUS_NL)}).",
            )
            continue
        activity = await gw.post(ref, progress_card(info.name, "in de wachtrij"), summary=info.name)
        await gw.store.upload_messages.put(
            UploadMessage(
                source_id=result.source.id, channel=ref.conversation.id, ts=activity, name=info.name
            )
        )


def progress_card(name: str, status: str) -> cards.Card:
    """The upload's status card."""
    return cards.card([cards.text(f"**{name}**"), cards.text(f"Status: {status}", subtle=True)])


async def on_source_event(gw: TeamsGateway, event: Any) -> None:
    """source.progress / completed / failed → the upload's card, when it came through Teams."""
    row = await gw.store.upload_messages.get(event.source_id)
    if row is None or row.final or not row.channel.startswith(TEAMS_CONVERSATION_PREFIXES):
        return  # uploaded elsewhere, or already final
    ref = await gw.refs.get(row.channel)
    if ref is None:
        return
    kind = event.SUBJECT.rsplit(".", 1)[-1]
    if kind == "progress":
        done, total = getattr(event, "chunks_done", None), getattr(event, "chunks_total", None)
        status = f"bezig ({done}/{total})" if done is not None and total else "bezig"
    elif kind == "completed":
        status = "klaar: toegevoegd aan de kennisgraaf"
    else:
        status = f"mislukt: {getattr(event, 'error', '') or '?'}"
    if (
        kind != "progress"
        and await gw.store.upload_messages.finish(event.source_id, {"status": kind}) is None
    ):
        return  # another replica reported the outcome
    await gw.replace(ref, row.ts, progress_card(row.name, status))
