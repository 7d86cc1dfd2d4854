"""Deleting a source on the running KG owner over the real nats-server: the preview says what
goes, a non-admin (or a request claiming admin rights) is refused, the bound holds, a second
confirm deletes nothing more, an unknown id is named."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from shared.bus import build_broker, request
from shared.bus.source_rpc import SOURCE_DELETE_SUBJECT, SourceDeleteReply, SourceDeleteRequest
from shared.bus.subjects import ns_subject
from shared.store import (
    Assertion,
    KbChanges,
    Relation,
    RelationKey,
    Source,
    Topic,
    TopicMetadata,
)

from .conftest import EventLog, running_extractor

ADMIN = "UADMIN1"


async def seed_sources(store: Any, *, extra_only_c: int = 6) -> None:
    """Source A asserts verlof, declaraties, teamlead (curated) and, with B, hr-portaal;
    source C alone asserts `extra_only_c` topics (over the bound of a small graph)."""
    for sid, name in (("src-a", "verlof.md"), ("src-b", "portaal.md"), ("src-c", "los.md")):
        await store.sources.create(Source(id=sid, name=name, sha256=sid[-1] * 64))
        await store.sources.set_status(sid, "completed")
    curated = TopicMetadata.model_validate({"curated": ["description"]})
    loose = [Topic(id=f"los-{i}", label=f"Los {i}", type="concept") for i in range(extra_only_c)]
    rel = RelationKey(source="verlof", target="hr-portaal", type="depends_on")
    shared = RelationKey(source="declaraties", target="hr-portaal", type="depends_on")
    await store.apply_kb_changes(KbChanges(
        topics_upsert=[
            Topic(id="verlof", label="Verlof", type="process",
                  description="Verlof vraag je twee weken vooraf aan in het HR-portaal."),
            Topic(id="declaraties", label="Declaraties", type="process",
                  description="Onkosten declareer je binnen dertig dagen."),
            Topic(id="teamlead", label="Teamlead", type="role", metadata=curated,
                  description="De teamlead keurt verlof goed."),
            Topic(id="hr-portaal", label="HR-portaal", type="concept",
                  description="Het HR-portaal is de plek voor verlof en declaraties."),
            *loose,
        ],
        relations_upsert=[Relation(source=k.source, target=k.target, type=k.type)
                          for k in (rel, shared)],
    ))  # fmt: skip
    rows = [Assertion(source_id="src-a", topic_id=t)
            for t in ("verlof", "declaraties", "teamlead", "hr-portaal")]  # fmt: skip
    rows += [Assertion(source_id="src-a", relation=rel), Assertion(source_id="src-a",
             relation=shared), Assertion(source_id="src-b", relation=shared)]  # fmt: skip
    rows += [Assertion(source_id="src-b", topic_id="hr-portaal")]
    rows += [Assertion(source_id="src-c", topic_id=t.id) for t in loose]
    await store.provenance.record(rows)


async def test_delete_over_the_bus_preview_refusals_bound_and_a_second_confirm(
    nats_url: str, unique: str, tmp_path: Path
) -> None:
    ns = f"t{unique}"
    url = f"sqlite:///{tmp_path / 's.db'}"
    log = await EventLog(ns).start(nats_url)
    try:
        async with running_extractor(
            nats_url=nats_url, namespace=ns, store_url=url, admins=(ADMIN,)
        ) as ctx:
            store = ctx.store
            await seed_sources(store)
            before = await store.topics.ids()
            client = build_broker(ctx.nats_url, name="test-source-client")
            await client.connect()

            async def ask(**kw: Any) -> SourceDeleteReply:
                body = SourceDeleteRequest.model_validate({"surface": "slack", **kw})
                return await request(client, SOURCE_DELETE_SUBJECT, body, namespace=ns,
                                     response_model=SourceDeleteReply, timeout=10)  # fmt: skip

            try:
                # A field claiming admin rights is no part of the contract: rejected unread.
                forged = {"actor": "UEVE", "surface": "slack", "source_id": "src-a",
                          "confirm": True, "is_admin": True}  # fmt: skip
                subject = ns_subject(SOURCE_DELETE_SUBJECT, ns)
                raw = await client.connection.request(
                    subject, json.dumps(forged).encode(), timeout=10
                )
                assert raw.headers["R42-Error"] == "bad_input" and b"is_admin" in raw.data
                lying = await ask(actor="UEVE", source_id="src-a", confirm=True)
                assert lying.outcome == "refused" and lying.removed == []
                assert await store.topics.ids() == before

                preview = await ask(actor=ADMIN, source_id="src-a")
                assert preview.outcome == "preview" and preview.source_name == "verlof.md"
                assert (preview.removed, preview.flagged) == (["declaraties", "verlof"],
                                                              ["teamlead"])  # fmt: skip
                # verlof→hr-portaal goes with verlof, declaraties→hr-portaal with declaraties
                assert (preview.relations, preview.graph_size, preview.bound) == (2, 10, 5)
                assert await store.topics.ids() == before

                over = await ask(actor=ADMIN, source_id="src-c", confirm=True)
                assert over.outcome == "over_bound" and over.over_bound
                assert (over.removed_count, over.bound) == (6, 5)
                assert await store.topics.ids() == before
                assert await store.sources.get("src-c") is not None

                done = await ask(actor=ADMIN, source_id="src-a", confirm=True)
                again = await ask(actor=ADMIN, source_id="src-a", confirm=True)
                missing = await ask(actor=ADMIN, source_id="src-nope", confirm=True)
                raised = await ask(actor=ADMIN, source_id="src-c", confirm=True, max_deletions=6)
            finally:
                await client.stop()
            assert done.outcome == "done" and done.undo_id and done.removed_count == 2
            assert again.outcome == "already_deleted" and again.undo_id == done.undo_id
            assert again.removed == ["declaraties", "verlof"]
            assert missing.outcome == "not_found"
            assert raised.outcome == "done" and raised.removed_count == 6
            ids = await store.topics.ids()
            assert ids == {"teamlead", "hr-portaal"}
            teamlead = await store.topics.get("teamlead")
            assert teamlead is not None and "src-a" in str(teamlead.metadata.model_dump()["review"])
            await log.wait_for(lambda: len(log.of("kb.updated")) == 2, 15)
            audit = [(e.actor, e.target, e.allowed, (e.after or {}).get("outcome"))
                     for e in reversed(await store.audit.latest())]  # fmt: skip
    finally:
        await log.close()
    first = log.of("kb.updated")[0]
    assert (first.removed_ids, first.changed_ids) == (["declaraties", "verlof"], ["teamlead"])
    assert audit == [
        ("UEVE", "src-a", False, "refused"), (ADMIN, "src-c", True, "over_bound"),
        (ADMIN, "src-a", True, "done"), (ADMIN, "src-a", True, "already_deleted"),
        (ADMIN, "src-nope", True, "not_found"), (ADMIN, "src-c", True, "done"),
    ]  # fmt: skip
