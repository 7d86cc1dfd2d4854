"""Uploaded sources: a new version retracts what the old one said; delete and undo via the CLI."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from services.extractor.local import ingest_locally
from services.extractor.provenance import asserters_of_topic
from services.extractor.uploads import register_upload
from shared.bus import KbUpdated
from shared.store import Store

from .conftest import OPTIONS
from .test_cli import invoke, query

V1 = "# Onboarding\n\n## Laptop\nJe krijgt een laptop.\n\n## Sleutel\nDe sleutel haal je op.\n"
V2 = "# Onboarding\n\n## Laptop\nJe krijgt een laptop.\n\n## Badge\nJe badge ligt bij HR.\n"
OTHER = "# Kantoor\n\n## Laptop\nLaptops staan in de kast.\n"


async def ingest(store: Store, name: str, text: str) -> list[Any]:
    events: list[Any] = []
    reg = await register_upload(store, name=name, text=text, uploaded_by="U1", actor="test")
    assert reg.source is not None
    await ingest_locally(store=store, source_ids=[reg.source.id], limiter=None,
                         options=OPTIONS, observer=events.append)  # fmt: skip
    return events


async def test_a_new_version_retracts_what_only_the_old_one_said(
    offline_extractor: Any, store: Store
) -> None:
    await ingest(store, "docs/onboarding.md", V1)
    await ingest(store, "kantoor.md", OTHER)
    assert {"laptop", "sleutel", "onboarding"} <= await store.topics.ids()
    laptop_before = await store.topics.get("laptop")
    events = await ingest(store, "docs/onboarding.md", V2)
    ids = await store.topics.ids()
    assert "sleutel" not in ids and "badge" in ids and "laptop" in ids
    updated = [e for e in events if isinstance(e, KbUpdated)]
    assert updated and updated[-1].removed_ids == ["sleutel"]
    assert len(await asserters_of_topic(store, "laptop")) == 2  # both documents say it
    laptop = await store.topics.get("laptop")
    assert laptop is not None and laptop_before is not None and laptop.id == laptop_before.id


def test_sources_delete_and_graph_undo_from_the_command_line(tmp_path: Path) -> None:
    (tmp_path / "a.md").write_text(V1)
    (tmp_path / "b.md").write_text(OTHER)
    assert invoke("ingest", str(tmp_path / "a.md"), str(tmp_path / "b.md")).exit_code == 0
    sources = {s.name: s.id for s in query(lambda s: s.sources.list())}
    before = query(lambda s: s.topics.ids())
    result = invoke("sources", "delete", sources["a.md"])
    assert result.exit_code == 0, result.output
    assert "2 topic(s) removed" in result.output and "r42 graph undo undo-" in result.output
    after = query(lambda s: s.topics.ids())
    assert before - after == {"onboarding", "sleutel"}  # "laptop" is also in b.md
    assert [s.name for s in query(lambda s: s.sources.list())] == ["b.md"]
    listing = invoke("graph", "undo", "--list")
    assert "delete source a.md" in listing.output
    undone = invoke("graph", "undo")
    assert undone.exit_code == 0 and "undid undo-" in undone.output
    assert query(lambda s: s.topics.ids()) == before
    missing = invoke("sources", "delete", "src-nope")
    assert missing.exit_code == 1 and "no source 'src-nope'" in missing.output
