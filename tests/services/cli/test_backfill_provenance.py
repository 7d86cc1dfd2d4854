"""`r42 kb backfill-provenance`: a graph from before provenance gets its asserters, once."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from services.cli.main import build_app
from shared.store import Relation, Source, Store, Topic, TopicMetadata, open_store


def meta(**kw: Any) -> TopicMetadata:
    return TopicMetadata.model_validate(kw)


async def legacy_graph(store: Store) -> None:
    """Topics and relations as an old release wrote them: metadata, no provenance rows."""
    await store.sources.create(Source(id="src-1", name="verlof.md", sha256="a" * 64))
    await store.sources.set_status("src-1", "completed")
    await store.topics.upsert_many([
        Topic(id="verlof", label="Verlof", type="concept",
              metadata=meta(source="verlof.md", source_id="src-1")),
        Topic(id="ziekte", label="Ziekte", type="concept",
              metadata=meta(source="verlof.md", source_id="src-1")),
        Topic(id="teamlead", label="Teamlead", type="role",
              metadata=meta(source="github_handbook", path="rollen.md")),
        Topic(id="werkplek", label="Werkplek", type="concept",
              metadata=meta(source="suggestion", created_by_admin=True)),
        Topic(id="oud", label="Oud", type="concept", metadata=meta(source="seed.json")),
    ])  # fmt: skip
    await store.relations.upsert_many([
        Relation(source="ziekte", target="verlof", type="related_to"),
        Relation(source="verlof", target="teamlead", type="executed_by"),
        Relation(source="oud", target="verlof", type="related_to"),
    ])  # fmt: skip


def test_backfill_attributes_each_topic_to_its_origin_and_is_idempotent(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'r42.db'}"
    env = {"R42_STORE": url, "R42_DATA_DIR": str(tmp_path), "COLUMNS": "200"}

    async def on_store(action: Any) -> Any:
        store = await open_store(url)
        try:
            return await action(store)
        finally:
            await store.close()

    asyncio.run(on_store(legacy_graph))
    runner = CliRunner()
    first = runner.invoke(build_app(), ["kb", "backfill-provenance"], env=env)
    assert first.exit_code == 0, first.output
    assert "backfilled 4 topic(s) and 2 relation(s)" in first.output
    assert "no origin recorded for 1 topic(s) (oud) and 1 relation(s)" in first.output

    async def asserters(store: Store) -> tuple[Any, Any]:
        topics = await store.provenance.sources_of(["verlof", "ziekte", "teamlead", "werkplek",
                                                    "oud"])  # fmt: skip
        relations = await store.provenance.sources_of_relations(
            [r.key for r in await store.relations.list()]
        )
        return topics, relations

    topics, relations = asyncio.run(on_store(asserters))
    assert topics == {"verlof": ["src-1"], "ziekte": ["src-1"],
                      "teamlead": ["handbook:rollen.md"], "werkplek": ["admin"]}  # fmt: skip
    assert relations == {("ziekte", "verlof", "related_to"): ["src-1"],
                         ("verlof", "teamlead", "executed_by"): ["src-1"]}  # fmt: skip

    again = runner.invoke(build_app(), ["kb", "backfill-provenance"], env=env)
    assert again.exit_code == 0 and "backfilled 0 topic(s) and 0 relation(s)" in again.output
    assert asyncio.run(on_store(asserters)) == (topics, relations)

    # Now the lifecycle works on the old graph: deleting the upload retracts its topics.
    deleted = runner.invoke(build_app(), ["sources", "delete", "src-1"], env=env)
    assert deleted.exit_code == 0, deleted.output
    left = asyncio.run(on_store(lambda s: s.topics.ids()))
    assert left == {"teamlead", "werkplek", "oud"}
