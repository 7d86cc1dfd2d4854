"""Files shared with R42 in a DM: validated, stored, announced, and followed to the end."""

from __future__ import annotations

import hashlib
import json

import pytest
from fpdf import FPDF

from services.gateway.slack import ids
from services.gateway.slack.blocks import admin as ba
from shared.bus import (
    SourceCancelled,
    SourceCompleted,
    SourceProgress,
    SourceUploaded,
    publish_event,
    serve_rpc,
)
from shared.bus.extractor_rpc import SYNC_HANDBOOK_SUBJECT as SYNC_SUBJECT
from shared.bus.extractor_rpc import (
    HandbookSyncReply,
    HandbookSyncRequest,
    SyncWaiting,
    WaitingRelation,
)
from shared.bus.objects import read_source_object
from shared.store import UploadMessage
from tests.fakes.fixtures import FAKE_SLACK_BOT_TOKEN
from tests.fakes.slack_server import FakeSlack
from tests.services.gateway.conftest import R42Stub, Tap
from tests.services.gateway.harness import ADMIN, USER, Gateway

MARKDOWN = b"# Verlof\n\nVerlof vraag je aan in het HR-portaal.\n\n## Ziekte\n\nMeld je ziek.\n"


def shared(file_id: str, user: str = ADMIN) -> dict:
    return {
        "type": "file_shared",
        "file_id": file_id,
        "user_id": user,
        "channel_id": f"D{user[1:]}",
        "file": {"id": file_id},
        "event_ts": "1700000000.1",
    }


def text_of(call) -> str:
    return json.dumps(call.args.get("blocks"), ensure_ascii=False) + str(call.args.get("text", ""))


async def test_admin_upload_is_ingested_with_progress(
    gateway: Gateway, fake_slack: FakeSlack, tap: Tap
) -> None:
    fake_slack.add_file("F1", name="verlof.md", content=MARKDOWN, mimetype="text/markdown")
    assert (await gateway.event(shared("F1"), event_id="EvU1"))[0] == 200
    uploaded = (await tap.wait(SourceUploaded))[0]
    store = gateway.ctx.store
    assert uploaded.sha256 == hashlib.sha256(MARKDOWN).hexdigest()
    assert (uploaded.name, uploaded.uploaded_by, uploaded.size) == (
        "verlof.md",
        ADMIN,
        len(MARKDOWN),
    )
    # Staged in r42-sources as any uploader's file; the extractor kept the text and dropped it.
    assert uploaded.text_ref.startswith("staged-")
    assert await store.source_texts.get(uploaded.source_id) == MARKDOWN.decode()
    conn = gateway.ctx.broker.connection
    assert await read_source_object(conn, uploaded.text_ref, max_bytes=10_000) is None
    assert (await store.sources.get(uploaded.source_id)).status == "pending"
    assert fake_slack.calls_to("files.info")[0].args["file"] == "F1"
    download = fake_slack.calls_to("files.download")[0]
    assert download.headers["Authorization"] == f"Bearer {FAKE_SLACK_BOT_TOKEN}"
    progress_msg = (await fake_slack.wait_for("chat.postMessage"))[0]
    await gateway.settle()

    # The extractor reports per chunk; the one progress message follows along.
    ns, broker = gateway.namespace, gateway.ctx.broker
    for done in (1, 2):
        await publish_event(
            broker,
            SourceProgress(
                actor="extractor",
                source_id=uploaded.source_id,
                chunks_done=done,
                chunks_total=3,
                topics_added=done,
                relations_added=done - 1,
            ),
            namespace=ns,
        )
        await fake_slack.wait_for("chat.update", done)
    await publish_event(
        broker,
        SourceCompleted(
            actor="extractor",
            source_id=uploaded.source_id,
            chunks_done=3,
            chunks_total=3,
            topics_added=4,
            topics_updated=1,
            relations_added=3,
            duration=2.5,
        ),
        namespace=ns,
    )
    updates = await fake_slack.wait_for("chat.update", 3)
    assert all(u.args["ts"] == progress_msg.response["ts"] for u in updates)
    assert "deel 2/3" in text_of(updates[1])
    assert "4 onderwerpen toegevoegd, 1 bijgewerkt, 3 relaties" in text_of(updates[2])
    # A late progress event does not overwrite the final message. The progress consumer
    # handles events in order, so once a sentinel's update shows, the late one was handled.
    await publish_event(
        broker,
        SourceProgress(
            actor="extractor",
            source_id=uploaded.source_id,
            chunks_done=2,
            chunks_total=3,
        ),
        namespace=ns,
    )
    await gateway.ctx.store.upload_messages.put(
        UploadMessage(source_id="sentinel", channel="DSENTINEL", ts="1.1", name="s")
    )
    await publish_event(
        broker,
        SourceProgress(
            actor="extractor",
            source_id="sentinel",
            chunks_done=0,
            chunks_total=1,
        ),
        namespace=ns,
    )
    await fake_slack.wait_for("chat.update", where=lambda c: c.args["channel"] == "DSENTINEL")
    await gateway.settle()
    ours = [
        c for c in fake_slack.calls_to("chat.update") if c.args["ts"] == progress_msg.response["ts"]
    ]
    assert len(ours) == 3

    # The same file again, once extracted, is recognised by the extractor's duplicate rule
    # (same name and content, completed), not extracted twice.
    await gateway.ctx.store.sources.set_status(uploaded.source_id, "completed")
    fake_slack.add_file("F2", name="verlof.md", content=MARKDOWN, mimetype="text/markdown")
    await gateway.event(shared("F2"), event_id="EvU2")
    note = (await fake_slack.wait_for("chat.postMessage", 2))[1]
    assert "al ingelezen" in text_of(note)
    assert len(tap.of(SourceUploaded)) == 1


async def test_admin_pdf_upload_is_ingested_as_its_text(
    gateway: Gateway, fake_slack: FakeSlack, tap: Tap
) -> None:
    """A PDF in a DM is read through its text layer, as the CLI and the sync read it."""
    pdf = FPDF()
    pdf.set_font("helvetica", size=12)
    pdf.add_page()
    pdf.cell(0, 10, "Thuiswerken: je krijgt 2 euro per dag.")
    fake_slack.add_file("FP", name="thuiswerken.pdf", content=bytes(pdf.output()),
                        mimetype="application/pdf")  # fmt: skip
    await gateway.event(shared("FP"), event_id="EvUP")
    uploaded = (await tap.wait(SourceUploaded))[0]
    text = await gateway.ctx.store.source_texts.get(uploaded.source_id)
    assert uploaded.name == "thuiswerken.pdf" and "2 euro per dag" in text
    assert "%PDF" not in text


@pytest.mark.parametrize(
    ("content", "limit", "expected"),
    [
        (b"\x89PNG\r\n\x1a\n\x00\x00binary", None, "binair"),
        (b"{\\rtf1\\ansi Hallo}", None, "niet lezen"),
        (b"x" * 600, 500, "maximum"),
    ],
    ids=["binary", "rtf", "too-big"],
)
async def test_bad_uploads_are_refused_with_a_reason(
    gateway: Gateway,
    fake_slack: FakeSlack,
    tap: Tap,
    content: bytes,
    limit: int | None,
    expected: str,
) -> None:
    if limit is not None:
        gateway.gw.client.ctx.settings = gateway.gw.client.settings.model_copy(
            update={"max_upload_bytes": limit}
        )
    fake_slack.add_file("FB", name="bestand.md", content=content, mimetype="text/plain")
    await gateway.event(shared("FB"), event_id="EvU3")
    note = (await fake_slack.wait_for("chat.postMessage"))[0]
    assert expected in text_of(note) and "niet ingelezen" in text_of(note)
    await gateway.settle()
    assert tap.of(SourceUploaded) == []
    assert await gateway.ctx.store.sources.list() == []


def file_share(file_id: str, text: str, user: str = USER) -> dict:
    """A DM with a file, as Slack sends it: message subtype file_share (file_shared follows)."""
    return {
        "type": "message",
        "subtype": "file_share",
        "text": text,
        "files": [{"id": file_id, "name": "a.md", "mimetype": "text/markdown", "size": 64}],
        "upload": False,
        "user": user,
        "display_as_bot": False,
        "ts": f"1700000100.{file_id[-1]}",
        "client_msg_id": f"cm-file-{file_id}",
        "channel": f"D{user[1:]}",
        "channel_type": "im",
        "event_ts": f"1700000100.{file_id[-1]}",
    }


async def test_non_admin_file_alone_is_explained(gateway: Gateway, fake_slack: FakeSlack) -> None:
    fake_slack.add_file("FN", name="a.md", content=MARKDOWN, mimetype="text/markdown")
    await gateway.event(file_share("FN", ""), event_id="EvU4")
    await gateway.event(shared("FN", user=USER), event_id="EvU4b")
    note = (await fake_slack.wait_for("chat.postMessage"))[0]
    assert "beheerders" in text_of(note) and "vraag" in text_of(note)
    await gateway.settle()
    assert (
        fake_slack.calls_to("files.info") == []
        and len(fake_slack.calls_to("chat.postMessage")) == 1
    )


async def test_non_admin_question_with_a_file_is_answered(
    gateway: Gateway, fake_slack: FakeSlack, r42_stub: R42Stub
) -> None:
    fake_slack.add_file("FQ", name="a.md", content=MARKDOWN, mimetype="text/markdown")
    await gateway.event(file_share("FQ", "Klopt dit verlofbeleid nog?"), event_id="EvU5")
    await gateway.event(shared("FQ", user=USER), event_id="EvU5b")
    await fake_slack.wait_for("chat.update", where=lambda c: "r42_feedback" in text_of(c))
    await gateway.settle()
    assert [c.text for c in r42_stub.chats] == ["Klopt dit verlofbeleid nog?"]
    assert not any("beheerders" in text_of(c) for c in fake_slack.calls)  # no refusal
    assert fake_slack.calls_to("files.info") == []  # nothing ingested for a non-admin


async def test_admin_file_share_and_file_shared_ingest_once(
    gateway: Gateway, fake_slack: FakeSlack, r42_stub: R42Stub
) -> None:
    fake_slack.add_file("FA", name="a.md", content=MARKDOWN, mimetype="text/markdown")
    await gateway.event(file_share("FA", "", user=ADMIN), event_id="EvU6")
    await gateway.event(shared("FA"), event_id="EvU6b")
    await fake_slack.wait_for("chat.postMessage", where=lambda c: "inlezen" in str(c.args))
    await gateway.settle()
    assert len(fake_slack.calls_to("files.info")) == 1 and r42_stub.chats == []


async def test_ingest_modal_and_cancel(gateway: Gateway, fake_slack: FakeSlack, tap: Tap) -> None:
    status, _ = await gateway.command("/r42", "ingest", user=ADMIN)
    assert status == 200
    view = (await fake_slack.wait_for("views.open"))[0]
    assert view.args["view"]["callback_id"] == ids.INGEST_VIEW

    # Empty fields come back as field errors; nothing is stored.
    status, body = await gateway.view(
        ids.INGEST_VIEW,
        {ba.INGEST_NAME_BLOCK: {"name": " "}, ba.INGEST_TEXT_BLOCK: {"text": ""}},
        user=ADMIN,
    )
    assert status == 200 and json.loads(body)["response_action"] == "errors"
    status, body = await gateway.view(
        ids.INGEST_VIEW,
        {
            ba.INGEST_NAME_BLOCK: {"name": "Pensioen"},
            ba.INGEST_TEXT_BLOCK: {"text": "# Pensioen\n\nTekst."},
        },
        user=USER,
    )
    assert "beheerders" in body

    await gateway.view(
        ids.INGEST_VIEW,
        {
            ba.INGEST_NAME_BLOCK: {"name": "Pensioen"},
            ba.INGEST_TEXT_BLOCK: {"text": "# Pensioen\n\nTekst."},
        },
        user=ADMIN,
    )
    uploaded = (await tap.wait(SourceUploaded))[0]
    assert uploaded.name == "Pensioen" and uploaded.uploaded_by == ADMIN
    await gateway.settle()

    await gateway.command("/r42", "sources", user=ADMIN)
    listing = (await fake_slack.wait_for("respond"))[0]
    cancel = next(b["accessory"] for b in listing.args["blocks"] if b.get("accessory"))
    assert cancel["value"] == uploaded.source_id
    await gateway.action(cancel["action_id"], cancel["value"], user=USER, ephemeral=True)
    refused = (await fake_slack.wait_for("respond", 2))[1]
    assert "beheerders" in refused.args["text"]
    await gateway.action(cancel["action_id"], cancel["value"], user=ADMIN, ephemeral=True)
    cancelled = (await tap.wait(SourceCancelled))[0]
    assert cancelled.source_id == uploaded.source_id and cancelled.actor == ADMIN
    assert len(tap.of(SourceCancelled)) == 1


async def test_handbook_sync_from_the_ingest_modal(gateway: Gateway, fake_slack: FakeSlack) -> None:
    sync = {ba.INGEST_SYNC_BLOCK: {ba.INGEST_SYNC_ACTION: [ba.INGEST_SYNC_VALUE]}}
    status, body = await gateway.view(ids.INGEST_VIEW, {}, user=ADMIN, checked=sync)
    assert status == 200 and body == ""
    # Nobody serves the sync subject yet: the admin hears how to sync instead.
    note = (
        await fake_slack.wait_for(
            "chat.postMessage", where=lambda c: "r42 sync-handbook" in text_of(c)
        )
    )[0]
    assert note.args["channel"] == f"D{ADMIN[1:]}"
    requests: list[HandbookSyncRequest] = []

    async def answer(req: HandbookSyncRequest) -> HandbookSyncReply:
        requests.append(req)
        named = WaitingRelation(source="teamlead", target="verlof", type="related_to", file="a.md")
        waiting = SyncWaiting(newly_waiting=1, still_waiting=1, max_wait_days=30,
                              newly_shown=[named])  # fmt: skip
        return HandbookSyncReply(changed=2, unchanged=8, waiting=waiting)

    await serve_rpc(
        gateway.ctx.broker,
        SYNC_SUBJECT,
        request_model=HandbookSyncRequest,
        handler=answer,
        namespace=gateway.namespace,
    )
    await gateway.view(ids.INGEST_VIEW, {}, user=ADMIN, checked=sync)
    done = await fake_slack.wait_for(
        "chat.postMessage", where=lambda c: "gesynchroniseerd" in text_of(c)
    )
    assert "2 bestand(en) bijgewerkt, 8 ongewijzigd" in text_of(done[0])
    # What waits comes as data; the gateway words it in Dutch (escaped for mrkdwn).
    assert ("0 mislukt. 1 relatie(s) wachten op onderwerpen die geen bestand definieert: "
            "teamlead → verlof (a.md)") in text_of(done[0])  # fmt: skip
    assert [r.user_id for r in requests] == [ADMIN]
    status, body = await gateway.view(ids.INGEST_VIEW, {}, user=USER, checked=sync)
    assert "beheerders" in body and len(requests) == 1
