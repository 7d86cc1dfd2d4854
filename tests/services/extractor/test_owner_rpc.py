"""The KG owner's rpcs on the real nats-server: kb import and upload registration."""

from __future__ import annotations

import asyncio
import json
import uuid
from pathlib import Path

import typer
from typer.testing import CliRunner

from services.cli import kb as kb_cli
from services.extractor.uploads import read_upload, sha256_text
from shared.bus import build_broker, request
from shared.bus.extractor_rpc import (
    REGISTER_UPLOAD_SUBJECT,
    RegisterUploadReply,
    RegisterUploadRequest,
)
from shared.bus.objects import put_source_object, read_source_object
from shared.runtime.service import ServiceContext

from .conftest import EventLog, running_extractor

DOC = {
    "topics": [
        {"id": "werkplek", "label": "Werkplek", "type": "concept", "description": "Een bureau."},
        {"id": "facilitair", "label": "Facilitair", "type": "role"},
    ],
    "relations": [{"source": "werkplek", "target": "facilitair", "type": "executed_by"}],
}


def kb_import(path: Path, env: dict[str, str]) -> object:
    app = typer.Typer()

    @app.callback()
    def root() -> None:
        """Test root."""

    kb_cli.register(app)
    return CliRunner().invoke(app, ["kb", "import", str(path)], env={"COLUMNS": "250", **env})


async def test_kb_import_goes_through_the_running_extractor_and_announces_it(
    nats_url: str, unique: str, tmp_path: Path
) -> None:
    ns = f"x{unique}"
    url = f"sqlite:///{tmp_path / 's.db'}"
    doc = tmp_path / "kb.json"
    doc.write_text(json.dumps(DOC))
    log = await EventLog(ns).start(nats_url)
    try:
        async with running_extractor(nats_url=nats_url, namespace=ns, store_url=url) as ctx:
            env = {"NATS_URL": nats_url, "R42_STORE": url, "R42_EXTRACTOR_BUS_NAMESPACE": ns,
                   "R42_DATA_DIR": str(tmp_path)}  # fmt: skip
            result = await asyncio.to_thread(kb_import, doc, env)
            assert result.exit_code == 0, result.output  # type: ignore[attr-defined]
            assert "the running stack" in result.stdout  # type: ignore[attr-defined]
            await log.wait_for(lambda: len(log.of("kb.updated")) == 1, 15)
            assert await ctx.store.topics.ids() == {"werkplek", "facilitair"}
    finally:
        await log.close()
    (updated,) = log.of("kb.updated")
    assert set(updated.changed_ids) == {"werkplek", "facilitair"}
    assert updated.actor == "extractor"


async def test_a_rejected_import_over_the_bus_writes_nothing(
    nats_url: str, unique: str, tmp_path: Path
) -> None:
    ns = f"x{unique}"
    url = f"sqlite:///{tmp_path / 's.db'}"
    bad = {"topics": [{"id": "Not Kebab", "label": "x", "type": "concept"}], "relations": []}
    doc = tmp_path / "kb.json"
    doc.write_text(json.dumps(bad))
    async with running_extractor(nats_url=nats_url, namespace=ns, store_url=url) as ctx:
        env = {"NATS_URL": nats_url, "R42_STORE": url, "R42_EXTRACTOR_BUS_NAMESPACE": ns,
               "R42_DATA_DIR": str(tmp_path)}  # fmt: skip
        result = await asyncio.to_thread(kb_import, doc, env)
        assert result.exit_code == 1  # type: ignore[attr-defined]
        assert "nothing was imported" in result.stderr  # type: ignore[attr-defined]
        assert await ctx.store.topics.ids() == set()


async def register(ctx: ServiceContext, name: str, raw: str) -> tuple[RegisterUploadReply, bool]:
    """Stage `raw` in r42-sources as a surface does and register it; whether the object is left."""
    staging = f"staged-{name}-{uuid.uuid4().hex[:8]}"
    client = build_broker(ctx.nats_url, name="test-uploader")
    await client.connect()
    await put_source_object(client.connection, staging, raw.encode())
    try:
        reply = await request(
            client, REGISTER_UPLOAD_SUBJECT,
            RegisterUploadRequest(name=name, text_ref=staging, uploaded_by="U1"),
            response_model=RegisterUploadReply, namespace=ctx.namespace, timeout=10,
        )  # fmt: skip
        left = await read_source_object(client.connection, staging, max_bytes=10_000)
        return reply, left is not None
    finally:
        await client.stop()


async def test_one_file_gets_one_sha256_whichever_way_it_is_uploaded(
    nats_url: str, unique: str, tmp_path: Path
) -> None:
    ns = f"x{unique}"
    crlf = "# Werkplek\r\n\r\nEen werkplek reserveer je in de app.\r\n"
    path = tmp_path / "werkplek.md"
    path.write_bytes(crlf.encode())
    from_disk = read_upload(path, max_bytes=10_000)  # the CLI's and the sample's path
    log = await EventLog(ns).start(nats_url)
    try:
        async with running_extractor(
            nats_url=nats_url, namespace=ns, store_url=f"sqlite:///{tmp_path / 's.db'}"
        ) as ctx:
            reply, left = await register(ctx, "werkplek.md", crlf)  # a surface's path, raw text
            source = await ctx.store.sources.get(reply.source_id)
            assert source is not None and source.sha256 == sha256_text(from_disk)
            assert not left  # the store holds the text; the staged object is gone
            await log.wait_for(lambda: log.of("source.completed", reply.source_id), 20)
            again, left = await register(ctx, "werkplek.md", crlf.replace("\r\n", "\n"))
            assert not left
            assert again.duplicate and again.source_id == reply.source_id
    finally:
        await log.close()
    uploaded = log.of("source.uploaded", reply.source_id)
    assert len(uploaded) == 1 and uploaded[0].sha256 == sha256_text(from_disk)
