"""A realistic handbook (nested folders, index.md per area, front matter) synced through edits."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from services.extractor.config import ExtractOptions
from services.extractor.handbook import SyncReport, sync_handbook
from services.extractor.provenance import asserters_of_topic
from shared.store import Store, open_store
from tests.fakes.anthropic_server import FakeAnthropic
from tests.shared.formats.documents import RAW_SYNTAX, Case, all_cases

from .fake_github import FakeGitHub, blob_sha
from .realistic_handbook import realistic_tree
from .test_handbook import settings_for
from .test_sync_lifecycle import responder, snapshot

# Whole sections in one chunk: the test is about the sync, not the chunker.
OPTIONS = ExtractOptions(max_chunk_chars=4000, overlap_chars=0, output_retries=1)
DELETED = "handbook/werk/kantoor-en-samenwerken/details/parkeren.md"
RENAMED = ("handbook/mensen/rollen/index.md", "handbook/mensen/functies/index.md")
SECTION_REMOVED = "handbook/mensen/hr-en-verlof/index.md"
SECTION_EDITED = "handbook/werk/security/index.md"


@pytest.fixture
def github() -> Iterator[FakeGitHub]:
    with FakeGitHub() as fake:
        fake.files = realistic_tree()
        fake.rate_limit = 5000  # a token's hourly quota: three full syncs exceed the 60 without
        yield fake


async def sync(store: Store, github: FakeGitHub) -> tuple[SyncReport, list[Any]]:
    async def publish(event: Any) -> None:
        published.append(event)

    published: list[Any] = []
    report = await sync_handbook(store=store, settings=settings_for(github), limiter=None,
                                 options=OPTIONS, publish=publish)  # fmt: skip
    return report, published


async def provenance(store: Store) -> dict[str, list[str]]:
    return {t: await asserters_of_topic(store, t) for t in await store.topics.ids()}


async def test_a_realistic_handbook_stays_equal_to_a_fresh_sync(
    github: FakeGitHub, fake_anthropic: FakeAnthropic, fake_llm: Any, store: Store,
    tmp_path: Path,
) -> None:  # fmt: skip
    fake_anthropic.default = responder
    tree = dict(github.files)
    assert 30 <= len(tree) <= 60 and max(p.count("/") for p in tree) >= 5
    report, _ = await sync(store, github)
    assert report.count("failed") == 0
    assert {f.path for f in report.files if f.status == "skipped"} == {
        "handbook/werk/engineering/later.md"
    }
    assert "handbook/assets/logo.png" not in {f.path for f in report.files}
    assert blob_sha(tree["handbook/assets/logo.png"]) not in github.blob_requests()
    before = {t.id: t for t in await store.topics.list()}
    owners = await provenance(store)
    # Each index.md keeps its folder in its name; front matter never reaches a topic.
    assert owners["vakantiedagen"] == ["handbook:mensen/hr-en-verlof/index.md"]
    assert owners["kernwaarden"] == ["handbook:organisatie/cultuur/details/kernwaarden.md"]
    assert len({a for names in owners.values() for a in names if a.endswith("index.md")}) == 11
    assert not any("permalink" in t.description or "layout:" in t.description
                   for t in before.values())  # fmt: skip
    assert "afkortingen" in before and "WBSO" in before["afkortingen"].description
    blobs = len(github.blob_requests())

    # Delete a file, rename (move) an index.md, remove a section, edit a section.
    del github.files[DELETED]
    github.files[RENAMED[1]] = github.files.pop(RENAMED[0])
    hr = github.files[SECTION_REMOVED].decode()
    start = hr.index("\n## Ouderschapsverlof")
    github.files[SECTION_REMOVED] = (hr[:start] + "\n").encode()
    github.files[SECTION_EDITED] = github.files[SECTION_EDITED].replace(b"zestien", b"twintig")
    report, published = await sync(store, github)
    statuses = {f.path: f.status for f in report.files if f.status != "unchanged"}
    assert statuses == {DELETED: "deleted", RENAMED[1]: "renamed",
                        SECTION_REMOVED: "changed", SECTION_EDITED: "changed"}  # fmt: skip
    # Everything else is unchanged (the empty file too: skipped once, its sha kept).
    assert report.count("unchanged") == len(github.files) - 1 - 3  # the image, the three above
    # Only the two edited blobs were fetched.
    assert sorted(github.blob_requests()[blobs:]) == sorted(
        blob_sha(github.files[p]) for p in (SECTION_REMOVED, SECTION_EDITED)
    )
    ids = await store.topics.ids()
    assert "parkeren" not in ids and "ouderschapsverlof" not in ids and "vakantiedagen" in ids
    edited = await store.topics.get("wachtwoordbeleid")
    assert edited is not None and "minimaal twintig tekens" in edited.description
    assert await asserters_of_topic(store, "wachtwoordbeleid") == [
        "handbook:werk/security/index.md"
    ]
    assert await asserters_of_topic(store, "teamlead") == ["handbook:mensen/functies/index.md"]
    event = published[-1]
    assert {"parkeren", "ouderschapsverlof"} <= set(event.removed_ids)
    # Untouched topics keep their ids and their rows.
    touched = {f"handbook:{p[9:]}" for p in (DELETED, SECTION_REMOVED, SECTION_EDITED)}
    kept = [t for t, names in owners.items() if not set(names) & touched]
    assert len(kept) > 50
    for topic_id in kept:
        assert await store.topics.get(topic_id) == before[topic_id], topic_id

    fresh = await open_store(f"sqlite:///{tmp_path / 'fresh.db'}")
    try:
        await sync(fresh, github)
        assert await snapshot(store) == await snapshot(fresh)
        assert await provenance(store) == await provenance(fresh)
    finally:
        await fresh.close()

    # A no-op sync: one conditional tree request, nothing fetched, nothing published.
    seen = len(github.requests)
    report, published = await sync(store, github)
    assert report.github_requests == len(github.requests) - seen <= 2
    assert github.requests[-1].status == 304 and published == []
    assert report.count("unchanged") == len(github.files) - 1  # all but the image


@pytest.mark.parametrize("case", all_cases(), ids=lambda c: c.name)
async def test_every_format_through_the_sync(
    case: Case, github: FakeGitHub, fake_anthropic: FakeAnthropic, fake_llm: Any, store: Store
) -> None:
    fake_anthropic.default = responder
    github.files = {f"handbook/docs/{case.name}": case.data, "handbook/a.md": b"# A\n\nTekst.\n"}
    report, _ = await sync(store, github)
    outcomes = {f.path: f for f in report.files}
    assert outcomes.pop("handbook/a.md").status == "changed" and report.count("failed") == 0
    topics = [t for t in await store.topics.list() if t.id != "a"]
    if case.text:
        [outcome] = outcomes.values()
        assert outcome.status == "changed", outcome.error
        text = " ".join(f"{t.label} {t.description}" for t in topics)
        assert case.text in text and not any(raw in text for raw in RAW_SYNTAX)
        assert not case.heading or case.heading in {t.id for t in topics}
    elif case.name.endswith(".pdf"):
        [outcome] = outcomes.values()
        assert outcome.status == "skipped" and case.error in (outcome.error or ""), outcome
        assert topics == []
    else:  # a format R42 does not read is left alone in a repo: never fetched, never failed
        assert outcomes == {} and topics == []
        assert blob_sha(case.data) not in github.blob_requests()
