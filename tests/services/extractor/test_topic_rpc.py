"""Topic actions on the running KG owner over the real nats-server: the CLI through the bus,
kb.updated announced, refusals audited, and a request claiming admin rights rejected."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from typer.testing import CliRunner, Result

from services.cli.main import build_app
from shared.bus import build_broker, request
from shared.bus.subjects import ns_subject
from shared.bus.topic_rpc import (
    TOPIC_ACTION_SUBJECT,
    TOPIC_CARD_SUBJECT,
    TopicAction,
    TopicCardReply,
    TopicCardRequest,
    TopicReply,
)
from shared.store import KbChanges, Relation, Topic

from .conftest import EventLog, running_extractor

ADMIN = "UADMIN1"


def cli(env: dict[str, str], *args: str) -> Result:
    return CliRunner().invoke(build_app(), list(args), env={"COLUMNS": "200", **env})


async def seed(ctx: object) -> None:
    store = ctx.store  # type: ignore[attr-defined]
    await store.apply_kb_changes(KbChanges(
        topics_upsert=[Topic(id="werkplek", label="Werkplek", type="concept"),
                       Topic(id="facilitair", label="Facilitair", type="role")],
        relations_upsert=[Relation(source="werkplek", target="facilitair", type="executed_by")],
    ))  # fmt: skip


async def test_cli_edits_through_the_running_owner_and_refusals_are_audited(
    nats_url: str, unique: str, tmp_path: Path
) -> None:
    ns = f"t{unique}"
    url = f"sqlite:///{tmp_path / 's.db'}"
    log = await EventLog(ns).start(nats_url)
    try:
        async with running_extractor(
            nats_url=nats_url, namespace=ns, store_url=url, admins=(ADMIN,)
        ) as ctx:
            await seed(ctx)
            env = {"NATS_URL": nats_url, "R42_EXTRACTOR_BUS_NAMESPACE": ns,
                   "R42_DATA_DIR": str(tmp_path), "R42_STORE": url}  # fmt: skip
            edit = ("kb", "topic", "edit", "werkplek", "--relevance", "core", "--lock")
            ok = await asyncio.to_thread(cli, env, *edit, "--as", ADMIN)
            assert ok.exit_code == 0, ok.output
            refused = await asyncio.to_thread(cli, env, "kb", "topic", "delete", "werkplek",
                                              "--yes", "--as", "UEVE")  # fmt: skip
            assert refused.exit_code == 1 and "refused" in refused.output
            # The default actor (console-<login>) is an admin in the embedded runtime, which
            # loopback NATS with SQLite is: the same edit again changes nothing.
            default = await asyncio.to_thread(cli, env, *edit)
            assert default.exit_code == 0 and default.output.startswith("unchanged")
            shown = await asyncio.to_thread(cli, env, "kb", "topic", "show", "Werkplek", "--json")
            assert json.loads(shown.output)["topic"]["relevance_locked"] is True
            await log.wait_for(lambda: len(log.of("kb.updated")) == 1, 15)
            topic = await ctx.store.topics.get("werkplek")
            assert topic is not None and topic.learning_relevance == "core"
            assert await ctx.store.topics.get("werkplek") is not None
            audit = await ctx.store.audit.latest()
    finally:
        await log.close()
    assert [(e.actor, e.action, e.allowed) for e in audit] == [
        (audit[0].actor, "topic.edit", True), ("UEVE", "topic.delete", False),
        (ADMIN, "topic.edit", True),
    ]  # fmt: skip
    assert audit[0].actor.startswith("console-")
    (updated,) = log.of("kb.updated")
    assert updated.changed_ids == ["werkplek"]


async def test_a_request_claiming_admin_rights_is_rejected_unread(
    nats_url: str, unique: str, tmp_path: Path
) -> None:
    ns = f"t{unique}"
    url = f"sqlite:///{tmp_path / 's.db'}"
    async with running_extractor(
        nats_url=nats_url, namespace=ns, store_url=url, admins=(ADMIN,)
    ) as ctx:
        await seed(ctx)
        client = build_broker(ctx.nats_url, name="test-topic-client")
        await client.connect()
        try:
            forged = {"actor": "UEVE", "surface": "slack", "action": "delete",
                      "topic_id": "werkplek", "is_admin": True}  # fmt: skip
            reply = await client.connection.request(
                ns_subject(TOPIC_ACTION_SUBJECT, ns), json.dumps(forged).encode(), timeout=10
            )
            assert b"is_admin" in reply.data and reply.headers["R42-Error"] == "bad_input"
            lying = TopicAction(actor="UEVE", surface="teams", action="delete",
                                topic_id="werkplek")  # fmt: skip
            answer = await request(client, TOPIC_ACTION_SUBJECT, lying, response_model=TopicReply,
                                   namespace=ns, timeout=10)  # fmt: skip
            assert answer.outcome == "refused"
            asked = TopicCardRequest(query="werk")
            card = await request(
                client, TOPIC_CARD_SUBJECT, asked, response_model=TopicCardReply, namespace=ns,
                timeout=10,
            )  # fmt: skip
            assert card.card is not None and card.card.topic.id == "werkplek"
            assert [(r.type, r.topic_id) for r in card.card.relations] == [
                ("executed_by", "facilitair")
            ]
        finally:
            await client.stop()
        assert await ctx.store.topics.get("werkplek") is not None
        (entry,) = await ctx.store.audit.latest()
        assert (entry.actor, entry.action, entry.allowed, entry.surface) == (
            "UEVE",
            "topic.delete",
            False,
            "teams",
        )
