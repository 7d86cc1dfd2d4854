"""The handbook sync keeps the graph true to the tree: deletions, renames, edits, scale."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from services.extractor.github import GitHubClient
from services.extractor.handbook import sync_handbook
from services.extractor.offline import derive_graph
from services.extractor.prompts import split_document_message
from services.extractor.provenance import asserters_of_topic
from shared.store import Store, Topic, TopicMetadata, open_store
from tests.fakes.anthropic_server import FakeAnthropic, Reply, tool_reply

from .conftest import OPTIONS, user_text
from .fake_github import FakeGitHub, blob_sha
from .test_handbook import settings_for

VERLOF = (b"# Verlof\n\n## Vakantiedagen\nJe hebt 27 vakantiedagen per jaar.\n\n"
          b"## Ouderschapsverlof\nTot het kind acht jaar is.\n")  # fmt: skip
ROLLEN = b"---\ntype: role\n---\n# Rollen\n\n## Teamlead\nDe teamlead keurt verlof goed.\n"
REIZEN = b"# Reizen\n\n## Reiskosten\nWe vergoeden 23 cent per kilometer.\n"
WERK = (
    b"# Werkplek\n\n## Thuiswerken\nThuiswerken mag altijd.\n\n## Laptop\nJe krijgt een laptop.\n"
)


def responder(body: Any) -> Reply:
    """Topics from the file's headings only (no cross-file hints): order independent."""
    parsed = split_document_message(user_text(body))
    assert parsed is not None
    path, document, _known = parsed
    return tool_reply("emit_handbook_delta", derive_graph(document, name=path, known_ids=[]))


@pytest.fixture
def github() -> Iterator[FakeGitHub]:
    with FakeGitHub() as fake:
        fake.files = {
            "handbook/verlof.md": VERLOF,
            "handbook/rollen/teamlead.md": ROLLEN,
            "handbook/reizen.md": REIZEN,
            "handbook/werkplek/index.md": WERK,
        }
        yield fake


async def sync(store: Store, github: FakeGitHub, **kw: Any) -> tuple[Any, list[Any]]:
    published: list[Any] = []

    async def publish(event: Any) -> None:
        published.append(event)

    report = await sync_handbook(store=store, settings=settings_for(github, **kw), limiter=None,
                                 options=OPTIONS, publish=publish)  # fmt: skip
    return report, published


async def snapshot(store: Store) -> tuple[set[tuple[str, str, str, str]], set[tuple[str, ...]]]:
    topics = {(t.id, t.label, t.type, t.description) for t in await store.topics.list()}
    relations = {(r.source, r.target, r.type) for r in await store.relations.list()}
    return topics, relations


async def test_edits_deletes_renames_match_a_fresh_sync(
    github: FakeGitHub, fake_anthropic: FakeAnthropic, fake_llm: Any, store: Store,
    tmp_path: Path,
) -> None:  # fmt: skip
    fake_anthropic.default = responder
    await sync(store, github)
    before = {t.id: t for t in await store.topics.list()}
    assert {"vakantiedagen", "ouderschapsverlof", "teamlead", "reiskosten", "laptop"} <= set(before)
    blobs = len(github.blob_requests())

    # Delete a file, rename one, remove a section, edit a section.
    del github.files["handbook/reizen.md"]
    github.files["handbook/rollen/leidinggevenden.md"] = github.files.pop(
        "handbook/rollen/teamlead.md"
    )
    github.files["handbook/verlof.md"] = (
        b"# Verlof\n\n## Vakantiedagen\nJe hebt 30 vakantiedagen per jaar.\n"
    )
    report, published = await sync(store, github)
    statuses = {f.path: f.status for f in report.files}
    assert statuses == {
        "handbook/reizen.md": "deleted",
        "handbook/rollen/leidinggevenden.md": "renamed",
        "handbook/verlof.md": "changed",
        "handbook/werkplek/index.md": "unchanged",
    }
    # Only the edited file's blob was fetched; the renamed one is the same blob.
    assert github.blob_requests()[blobs:] == [blob_sha(github.files["handbook/verlof.md"])]
    ids = await store.topics.ids()
    assert "reiskosten" not in ids and "reizen" not in ids and "ouderschapsverlof" not in ids
    vakantie = await store.topics.get("vakantiedagen")
    assert vakantie is not None and "30 vakantiedagen" in vakantie.description
    assert await asserters_of_topic(store, "teamlead") == ["handbook:rollen/leidinggevenden.md"]
    # Untouched topics keep their ids and rows.
    for topic_id in ("teamlead", "thuiswerken", "laptop", "werkplek"):
        assert (await store.topics.get(topic_id)) == before[topic_id]
    event = published[-1]
    assert event.subject == "kb.updated"
    assert {"reiskosten", "reizen", "ouderschapsverlof"} <= set(event.removed_ids)
    assert "vakantiedagen" in event.changed_ids

    fresh = await open_store(f"sqlite:///{tmp_path / 'fresh.db'}")
    try:
        await sync(fresh, github)
        assert await snapshot(store) == await snapshot(fresh)
    finally:
        await fresh.close()

    # A file deleted and later restored is extracted again.
    github.files["handbook/reizen.md"] = REIZEN
    report, _ = await sync(store, github)
    assert {f.path: f.status for f in report.files}["handbook/reizen.md"] == "changed"
    assert "reiskosten" in await store.topics.ids()


async def test_a_curated_topic_is_flagged_not_removed(
    github: FakeGitHub, fake_anthropic: FakeAnthropic, fake_llm: Any, store: Store
) -> None:
    fake_anthropic.default = responder
    await sync(store, github)
    await store.topics.set_relevance("reiskosten", "core")  # an admin decision (locked)
    del github.files["handbook/reizen.md"]
    _, published = await sync(store, github)
    kept = await store.topics.get("reiskosten")
    assert kept is not None and kept.learning_relevance == "core"
    assert "no source asserts it" in kept.metadata.model_dump()["review"]
    assert "reizen" not in await store.topics.ids()  # not curated: removed
    assert "reiskosten" not in published[-1].removed_ids


async def test_curated_fields_win_over_extraction(
    github: FakeGitHub, fake_anthropic: FakeAnthropic, fake_llm: Any, store: Store
) -> None:
    fake_anthropic.default = responder
    await sync(store, github)
    topic = await store.topics.get("vakantiedagen")
    assert topic is not None
    meta = {**topic.metadata.model_dump(exclude_none=True), "curated": ["description", "label"]}
    await store.topics.upsert_many([topic.model_copy(update={
        "label": "Vakantie (door HR)", "description": "Door HR geschreven.",
        "metadata": TopicMetadata.model_validate(meta)})])  # fmt: skip
    await store.topics.set_relevance("vakantiedagen", "core")
    github.files["handbook/verlof.md"] = VERLOF.replace(b"27", b"30")
    await sync(store, github)
    after = await store.topics.get("vakantiedagen")
    assert after is not None
    assert (after.label, after.description, after.learning_relevance) == (
        "Vakantie (door HR)", "Door HR geschreven.", "core",
    )  # fmt: skip
    assert after.metadata.model_dump()["curated"] == ["description", "label"]


async def test_no_op_sync_costs_one_request_and_failures_retry(
    github: FakeGitHub, fake_anthropic: FakeAnthropic, fake_llm: Any, store: Store
) -> None:
    fake_anthropic.default = responder
    github.files["handbook/leeg.md"] = b""
    github.files["handbook/scan.pdf"] = (
        b"%PDF-1.4\n%\xe2\xe3\n1 0 obj<<>>endobj\ntrailer<<>>\n%%EOF"
    )
    report, _ = await sync(store, github)
    assert {f.path: f.status for f in report.files if f.status == "skipped"} == {
        "handbook/leeg.md": "skipped", "handbook/scan.pdf": "skipped"
    }  # fmt: skip
    assert report.count("failed") == 0
    seen = len(github.requests)
    report, _ = await sync(store, github)
    assert len(github.requests) - seen == 1 and report.github_requests == 1
    assert github.requests[-1].status == 304
    assert report.count("unchanged") == 6 and report.count("skipped") == 0


async def test_large_trees_are_walked_and_nothing_is_capped() -> None:
    with FakeGitHub() as github:
        github.max_tree_entries = 300  # GitHub truncates large recursive trees
        github.rate_limit = 10_000
        for d in range(600):  # more than 500 directories
            github.files[f"handbook/d{d:03}/sub/notes.txt"] = f"Notitie {d}".encode()
        for n in range(1100):  # more than GitHub's 1,000-entry listing of one folder
            github.files[f"handbook/groot/f{n:04}.md"] = f"# Bestand {n}\n".encode()
        github.files["elders/x.md"] = b"# Elders\n"
        client = GitHubClient(api_url=github.url, owner=github.owner, repo=github.repo,
                              branch=github.branch)  # fmt: skip
        try:
            listing = await client.list_files("handbook")
        finally:
            await client.aclose()
    assert len(listing.files) == 1700
    assert {f.path for f in listing.files} == {p for p in github.files if p.startswith("handbook/")}
    assert all(f.sha == blob_sha(github.files[f.path]) for f in listing.files)
    trees = [r for r in github.requests if "/git/trees/" in r.path]
    # Walked folder by folder below the truncation: one request per folder, never per file.
    assert len(trees) == len(github.requests) <= 601 + 6


async def test_a_truncated_tree_still_syncs_every_file(
    github: FakeGitHub, fake_anthropic: FakeAnthropic, fake_llm: Any, store: Store
) -> None:
    fake_anthropic.default = responder
    github.max_tree_entries = 3
    report, _ = await sync(store, github)
    assert report.count("changed") == 4 and report.count("failed") == 0


async def test_rate_limit_stops_the_sync_at_once(
    github: FakeGitHub, fake_anthropic: FakeAnthropic, fake_llm: Any, store: Store
) -> None:
    fake_anthropic.default = responder
    github.rate_limit = 3  # the tree and two blobs
    report, _ = await sync(store, github)
    assert report.rate_limited is not None and "resets at" in report.rate_limited
    assert report.count("changed") == 2 and report.count("not_tried") == 2
    refused = [r for r in github.requests if r.status == 403]
    assert len(refused) == 1  # it stopped asking after the first refusal
    assert len(await store.handbook_sync.all()) == 2
    github.rate_limit = 100
    report, _ = await sync(store, github)
    assert report.count("changed") == 2 and report.count("unchanged") == 2
    assert report.rate_limited is None


async def test_topic_from_before_provenance_is_not_touched(
    github: FakeGitHub, fake_anthropic: FakeAnthropic, fake_llm: Any, store: Store
) -> None:
    fake_anthropic.default = responder
    await store.topics.upsert_many([Topic(id="oud", label="Oud", type="concept")])
    await sync(store, github)
    del github.files["handbook/reizen.md"]
    await sync(store, github)
    assert "oud" in await store.topics.ids()


async def test_an_extraction_rewriting_many_topics_is_held_for_review(
    github: FakeGitHub, fake_anthropic: FakeAnthropic, fake_llm: Any, store: Store
) -> None:
    from services.extractor.review import held_changes, release
    from services.extractor.undo import undo

    fake_anthropic.default = responder
    await store.topics.upsert_many(
        [Topic(id=f"onderwerp-{i}", label=f"Onderwerp {i}", type="concept",
               description="Zoals HR het schreef.") for i in range(30)]
    )  # fmt: skip
    sections = "".join(f"## Onderwerp {i}\nIets heel anders.\n\n" for i in range(6))
    github.files = {"handbook/injectie.md": f"## Onderwerp 99\nNieuw.\n\n{sections}".encode()}
    report, _ = await sync(store, github)
    assert [(f.status, f.topics_updated) for f in report.files] == [("held", 6)]
    assert "r42 graph held" in (report.files[0].error or "")
    untouched = await store.topics.get("onderwerp-0")
    assert untouched is not None and untouched.description == "Zoals HR het schreef."
    assert "onderwerp-99" not in await store.topics.ids()  # nothing of it was applied
    held = await held_changes(store)
    assert [h.updated_ids for h in held] == [[f"onderwerp-{i}" for i in range(6)]]
    again, _ = await sync(store, github)  # not asked again every sync
    assert again.count("unchanged") == 1

    undo_id = await release(store, held[0].key, publish=None)
    released = await store.topics.get("onderwerp-0")
    assert released is not None and released.description == "Iets heel anders."
    assert await held_changes(store) == []
    await undo(store, undo_id)
    restored = await store.topics.get("onderwerp-0")
    assert restored is not None and restored.description == "Zoals HR het schreef."


async def test_the_stores_curation_marks_are_honoured(
    github: FakeGitHub, fake_anthropic: FakeAnthropic, fake_llm: Any, store: Store
) -> None:
    fake_anthropic.default = responder
    await sync(store, github)
    topic = await store.topics.get("reiskosten")
    assert topic is not None
    await store.topics.upsert_many([topic.model_copy(update={"description": "Door HR."})])
    await store.curation.mark("reiskosten", ["description"], by="U-admin")
    github.files["handbook/reizen.md"] = REIZEN.replace(b"23 cent", b"25 cent")
    await sync(store, github)
    kept = await store.topics.get("reiskosten")
    assert kept is not None and kept.description == "Door HR."
    del github.files["handbook/reizen.md"]
    await sync(store, github)
    flagged = await store.topics.get("reiskosten")
    assert flagged is not None and "review" in flagged.metadata.model_dump()


def knowing(*ids: str) -> Any:
    """A responder hinted with topics of other files, so relations cross files."""

    def respond(body: Any) -> Reply:
        parsed = split_document_message(user_text(body))
        assert parsed is not None
        path, document, _known = parsed
        graph = derive_graph(document, name=path, known_ids=list(ids))
        return tool_reply("emit_handbook_delta", graph)

    return respond


async def test_a_relation_to_a_file_synced_later_is_applied_when_it_arrives(
    fake_anthropic: FakeAnthropic, fake_llm: Any, store: Store, tmp_path: Path
) -> None:
    # The teamlead section mentions verlof, a topic of the other file.
    fake_anthropic.default = knowing("verlof")
    graphs = []
    for order in ((ROLLEN, VERLOF), (VERLOF, ROLLEN)):
        target = await open_store(f"sqlite:///{tmp_path / f'{len(graphs)}.db'}")
        try:
            with FakeGitHub() as github:
                github.files = {"handbook/a.md": order[0], "handbook/b.md": order[1]}
                report, _ = await sync(target, github)
                assert [f.status for f in report.files] == ["changed", "changed"]
            graphs.append(await snapshot(target))
            assert await target.pending_merges.relations_of("handbook:a.md") == []
        finally:
            await target.close()
    first, reversed_order = graphs
    assert ("teamlead", "verlof", "related_to") in first[1]
    assert first == reversed_order

    # A relation still waiting moves with a renamed file, and lands when the topic comes.
    with FakeGitHub() as github:
        github.files = {"handbook/a.md": ROLLEN}
        await sync(store, github)
        assert len(await store.pending_merges.relations_of("handbook:a.md")) == 1
        github.files = {"handbook/c.md": ROLLEN}
        report, _ = await sync(store, github)
        assert [f.status for f in report.files] == ["renamed"]
        assert await store.pending_merges.relations_of("handbook:a.md") == []
        github.files["handbook/d.md"] = VERLOF
        await sync(store, github)
    assert await snapshot(store) == first
    assert await store.pending_merges.relations_of("handbook:c.md") == []
