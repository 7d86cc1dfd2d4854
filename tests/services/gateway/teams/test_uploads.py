"""Uploads in a personal chat: Teams file attachments from admins become sources."""

from __future__ import annotations

from shared.bus import SourceCompleted, SourceUploaded, publish_event
from tests.services.gateway.conftest import R42Stub
from tests.services.gateway.harness import make_tap
from tests.services.gateway.teams.activities import (
    ADMIN_AAD,
    USER_AAD,
    channel_mention,
    personal_conversation,
    personal_message,
)
from tests.services.gateway.teams.conftest import Teams

FILE_INFO = "application/vnd.microsoft.teams.file.download.info"


def file_message(teams: Teams, name: str, data: bytes, *, aad: str = ADMIN_AAD) -> dict:
    url = teams.connector.host_file(name, data)
    attachment = {
        "contentType": FILE_INFO,
        "contentUrl": f"https://contoso.sharepoint.com/personal/{name}",
        "name": name,
        "content": {
            "downloadUrl": url,
            "uniqueId": "1150D938-8870-4044-9F2C-5BBDEBA70C9D",
            "fileType": name.rsplit(".", 1)[-1],
        },
    }
    return personal_message(
        teams.connector.url, "", aad=aad, name="Bea Beheer", attachments=[attachment]
    )


async def test_an_admin_upload_becomes_a_source_with_progress(teams: Teams, r42: R42Stub) -> None:
    tap = await make_tap(teams)  # type: ignore[arg-type]
    await teams.post(
        file_message(teams, "onboarding.md", b"# Onboarding\n\nJe krijgt een buddy.\n")
    )
    await teams.settle()
    [uploaded] = await tap.wait(SourceUploaded)
    assert uploaded.name == "onboarding.md" and uploaded.uploaded_by == ADMIN_AAD
    conv = personal_conversation(ADMIN_AAD)
    card = await teams.connector.wait_for(
        lambda c: c.conversation_id == conv and "wachtrij" in c.card_text
    )
    await publish_event(
        teams.ctx.broker,
        SourceCompleted(
            actor="extractor",
            source_id=uploaded.source_id,
            chunks_done=1,
            chunks_total=1,
            duration=1.0,
        ),
        namespace=teams.namespace,
    )
    done = await teams.connector.wait_for(lambda c: c.method == "PUT" and "klaar" in c.card_text)
    assert done.activity_id == card.activity_id


async def test_uploads_are_refused_for_non_admins_binaries_and_channels(
    teams: Teams, r42: R42Stub
) -> None:
    await teams.post(file_message(teams, "notes.md", b"# Notities\n", aad=USER_AAD))
    await teams.post(file_message(teams, "photo.md", b"\x89PNG\r\n\x1a\n\x00\x00\x00binary"))
    channel = channel_mention(teams.connector.url, "")
    channel["attachments"] = file_message(teams, "x.md", b"# X\n")["attachments"]
    await teams.post(channel)
    await teams.settle()
    texts = [c.card_text for c in teams.connector.calls]
    assert any("alleen beheerders" in t for t in texts)
    assert any("binair" in t for t in texts)
    assert any("privégesprek" in t for t in texts)
    assert await teams.ctx.store.sources.list(limit=10) == []
