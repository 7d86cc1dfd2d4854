"""Relations waiting for a topic no file defines: listed, reported once, bounded, retracted."""

from __future__ import annotations

import asyncio
import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from services.cli.sync_words import waiting_words
from services.extractor.outcomes import fail_source
from services.extractor.pending import MAX_PER_FILE, carry_over
from services.extractor.pending_bounds import MAX_WAIT, Unresolved
from shared.bus.extractor_rpc import SyncWaiting, WaitingRelation
from shared.store import PendingRelation, Relation, Source, Store
from tests.fakes.anthropic_server import FakeAnthropic
from tests.fakes.fixtures import FAKE_ANTHROPIC_API_KEY

from .fake_github import FakeGitHub
from .test_cli import app
from .test_sync_lifecycle import ROLLEN, knowing, sync

WAITS = ("handbook:a.md", 0, "teamlead", "verlof", "related_to")


async def _age(store: Store, days: float) -> None:
    """Make every pending relation have waited `days` (as if asserted that long ago)."""
    rows = await store.pending_merges.all_relations()
    await store.pending_merges.remove_relations(rows)
    since = datetime.now(UTC) - timedelta(days=days)
    await store.pending_merges.add_relations(p.model_copy(update={"added_at": since}) for p in rows)


async def _kb_pending(url: str, *, as_json: bool = True) -> Any:
    """`r42 kb pending [--json]` (in a thread: the command runs its own event loop)."""
    from tests.services.cli.test_kb_cli import ENV, cli

    args = ["kb", "pending", *(["--json"] if as_json else []), "--store", url]
    result = await asyncio.to_thread(CliRunner().invoke, cli(), args, env=ENV)
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout) if as_json else result.stdout


async def test_a_relation_no_file_can_complete_is_listed_reported_once_then_dropped(
    fake_anthropic: FakeAnthropic, fake_llm: Any, store: Store, tmp_path: Path
) -> None:
    fake_anthropic.default = knowing("verlof")  # the teamlead file mentions verlof; no file has it
    with FakeGitHub() as github:
        github.files = {"handbook/a.md": ROLLEN}
        report, _ = await sync(store, github)
        assert report.complete and report.waiting is not None
        assert [p.identity for p in report.waiting.newly_waiting] == [WAITS]
        named = WaitingRelation(source="teamlead", target="verlof", type="related_to", file="a.md")
        assert report.waiting.summary() == SyncWaiting(
            newly_waiting=1, still_waiting=1, max_wait_days=30, newly_shown=[named]
        )
        url = f"sqlite:///{tmp_path / 'kb.db'}"  # the extractor conftest's store file
        listed = await _kb_pending(url)
        assert listed["total"] == 1
        (row,) = listed["pending"]
        assert (row["source"], row["relation"], row["target"]) == ("handbook:a.md", "teamlead",
                                                                   "verlof")  # fmt: skip
        assert row["waits_for"] == ["verlof"] and 0 <= row["age_s"] < 60
        table = await _kb_pending(url, as_json=False)
        assert "teamlead → verlof (related_to)" in table and "a.md" in table
        assert "Pending relations: 1" in table and "0 min" in table

        again, _ = await sync(store, github)  # a no-op sync: already reported, still waiting
        assert again.waiting is not None and again.waiting.newly_waiting == []
        assert again.waiting.summary() == SyncWaiting(still_waiting=1, max_wait_days=30)

        await _age(store, MAX_WAIT.days - 1)
        kept, _ = await sync(store, github)
        assert kept.waiting is not None and kept.waiting.expired == []
        await _age(store, MAX_WAIT.days + 1)
        dropped, _ = await sync(store, github)
        assert dropped.waiting is not None
        assert [p.identity for p in dropped.waiting.expired] == [WAITS]
        assert dropped.waiting.summary() == SyncWaiting(
            expired=1, max_wait_days=30, expired_shown=[named]
        )
        assert await store.pending_merges.all_relations() == []
        assert (await _kb_pending(url))["total"] == 0


async def test_an_incomplete_sync_reports_nothing_and_a_new_version_keeps_the_age(
    fake_anthropic: FakeAnthropic, fake_llm: Any, store: Store
) -> None:
    fake_anthropic.default = knowing("verlof")
    with FakeGitHub() as github:
        github.files = {"handbook/a.md": ROLLEN, "handbook/b.md": b"# Reizen\n\nPer trein.\n"}
        github.rate_limit = 2  # the tree and a.md's blob; b.md's blob is refused: stopped
        report, _ = await sync(store, github)
    assert report.rate_limited is not None and not report.complete
    assert report.waiting is None  # the untried file might define the topic
    waiting = await store.pending_merges.all_relations()
    assert [p.identity for p in waiting] == [WAITS]
    # The file's next version still asserts it: it keeps the age it had.
    await _age(store, 3)
    first = (await store.pending_merges.all_relations())[0].added_at
    with FakeGitHub() as github:
        github.files = {"handbook/a.md": ROLLEN + b"\nDe teamlead plant ook verlof in.\n"}
        await sync(store, github)
    (after,) = await store.pending_merges.all_relations()
    assert after.added_at == first
    # A version that no longer says it retracts it.
    with FakeGitHub() as github:
        github.files = {"handbook/a.md": b"# Rollen\n\n## Teamlead\nDe teamlead plant.\n"}
        await sync(store, github)
    assert await store.pending_merges.all_relations() == []


def test_a_file_keeps_at_most_max_per_file_pending_relations_longest_waiting_first() -> None:
    t0 = datetime(2026, 11, 1, tzinfo=UTC)

    def row(i: int, at: datetime | None = None) -> PendingRelation:
        relation = Relation(source="teamlead", target=f"ghost-{i:03d}", type="related_to")
        return PendingRelation(source_id="handbook:a.md", chunk_index=0, relation=relation,
                               added_at=at)  # fmt: skip

    old = [row(i, t0 + timedelta(hours=i)) for i in range(140, 150)]
    new = [row(i) for i in range(150)]
    kept = carry_over(new, old)
    assert len(kept) == MAX_PER_FILE
    # The ten that already waited come first with their age; then new ones in key order.
    assert [p.relation.target for p in kept[:10]] == [f"ghost-{i}" for i in range(140, 150)]
    assert kept[0].added_at == t0 + timedelta(hours=140)
    assert [p.relation.target for p in kept[10:12]] == ["ghost-000", "ghost-001"]


async def test_a_failed_source_leaves_no_pending_relations(store: Store) -> None:
    await store.sources.create(Source(id="s1", name="a.md", sha256="a" * 64))
    await store.sources.set_status("s1", "processing")
    relation = Relation(source="teamlead", target="verlof", type="related_to")
    await store.pending_merges.add_relations(
        [PendingRelation(source_id="s1", chunk_index=0, relation=relation)]
    )
    await store.pending_merges.hold("s1", 2, {"chunk_index": 2})
    published: list[Any] = []

    async def publish(event: Any) -> None:
        published.append(event)

    await fail_source(store, "s1", "the model refused", publish)
    assert await store.pending_merges.relations_of("s1") == []
    assert await store.pending_merges.held_indexes("s1") == []


def test_the_cli_words_the_typed_report_in_english() -> None:
    relation = Relation(source="teamlead", target="verlof", type="related_to")
    one = PendingRelation(source_id="handbook:rollen.md", chunk_index=0, relation=relation)
    line = waiting_words(Unresolved(newly_waiting=[one], expired=[one]).summary())
    assert line == (
        "1 relation(s) wait for topics no file defines: teamlead → verlof (rollen.md); "
        "1 relation(s) dropped after waiting 30 days: teamlead → verlof (rollen.md)"
    )
    # A sync names a few and says how many there are.
    many = [one.model_copy(update={"chunk_index": i}) for i in range(7)]
    summary = Unresolved(newly_waiting=many).summary()
    assert summary.newly_waiting == 7 and len(summary.newly_shown) == 5
    words = waiting_words(summary)
    assert words.startswith("7 relation(s) wait") and words.endswith(" …")
    assert waiting_words(Unresolved().summary()) == "" and waiting_words(None) == ""


def test_r42_sync_handbook_prints_what_waits_in_english(fake_anthropic: FakeAnthropic) -> None:
    fake_anthropic.default = knowing("verlof")
    with FakeGitHub() as github:
        github.files = {"handbook/a.md": ROLLEN}
        env = {
            "R42_LLM": "anthropic", "ANTHROPIC_BASE_URL": fake_anthropic.url,
            "ANTHROPIC_API_KEY": FAKE_ANTHROPIC_API_KEY, "R42_LIMITER": "off",
            "R42_GITHUB_API_URL": github.url, "R42_HANDBOOK_OWNER": github.owner,
            "R42_HANDBOOK_REPO": github.repo, "R42_HANDBOOK_PATH": "handbook", "COLUMNS": "250",
        }  # fmt: skip
        result = CliRunner().invoke(app(), ["sync-handbook"], env=env, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert ("1 relation(s) wait for topics no file defines: teamlead → verlof (a.md) "
            "(see `r42 kb pending`)") in result.output  # fmt: skip
