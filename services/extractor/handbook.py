"""Handbook sync: keep the knowledge graph true to the GitHub handbook's current tree.

One conditional tree request per sync; blobs only for files whose git sha changed; a file
renamed with the same content moves its provenance; a deleted (or emptied) file retracts
what it asserted; re-extracting a changed file retracts what only its old version said.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Literal

from services.extractor.config import ExtractOptions
from services.extractor.curation import curation_marks, keep_curated
from services.extractor.github import GitHubClient, RateLimitedError, RepoFile, TreeListing
from services.extractor.merge import plan_against_store, relations_for_store, topics_for_store
from services.extractor.outcomes import Publish, publish_kb_updated
from services.extractor.pending import keep_file_pending, move_pending, resolve_pending
from services.extractor.pending_bounds import Unresolved, review_waiting
from services.extractor.pipeline import ask_with_output_retries, to_bus_payload
from services.extractor.ports import ExtractorStore
from services.extractor.prompts import HANDBOOK_SYSTEM, PROMPT_VERSION, handbook_message
from services.extractor.provenance import (
    Retraction,
    asserted_by_result,
    rename_asserter,
    replace_assertions,
    retract_all,
)
from services.extractor.recent import recent_topic_ids
from services.extractor.review import hold_if_over_bound
from services.extractor.runner import describe_error
from services.extractor.tombstones import count_skips, without_tombstoned
from services.extractor.tools import EMIT_HANDBOOK_DELTA, HandbookDelta
from shared.bus import ExtractedRelation, Topic
from shared.config import Settings
from shared.errors import ConfigError, R42Error
from shared.formats import (
    EmptyDocumentError,
    FormatError,
    is_supported,
    read_document,
    unsupported,
)
from shared.kb import chunk_text
from shared.llm import Limiter
from shared.store import HandbookTree, KbChanges

log = logging.getLogger(__name__)

HANDBOOK_SOURCE = "github_handbook"
Status = Literal[
    "changed", "unchanged", "failed", "skipped", "deleted", "renamed", "not_tried", "held"
]


@dataclass(frozen=True)
class FileOutcome:
    """What the sync did with one handbook file."""

    path: str
    status: Status
    topics_added: int = 0
    topics_updated: int = 0
    relations_added: int = 0
    error: str | None = None
    changed_ids: tuple[str, ...] = ()
    removed_ids: tuple[str, ...] = ()
    renamed_from: str | None = None


@dataclass
class SyncReport:
    """Every file's outcome, in path order, and how the sync ended."""

    files: list[FileOutcome] = field(default_factory=list)
    github_requests: int = 0
    rate_limited: str | None = None
    rate_limit_reset: datetime | None = None
    waiting: Unresolved | None = None
    """After a complete sync: relations that wait for topics no file defines."""

    @property
    def complete(self) -> bool:
        """Every file of the tree is synced (none failed, held or left untried)."""
        unsynced = ("failed", "not_tried", "held")
        return self.rate_limited is None and not any(f.status in unsynced for f in self.files)

    def count(self, status: str) -> int:
        """How many files ended with this status."""
        return sum(1 for f in self.files if f.status == status)

    @property
    def changed_ids(self) -> list[str]:
        """Topic ids the sync added or changed."""
        return sorted({i for f in self.files for i in f.changed_ids} - set(self.removed_ids))

    @property
    def removed_ids(self) -> list[str]:
        """Topic ids the sync removed (no source asserts them any more)."""
        return sorted({i for f in self.files for i in f.removed_ids})


def github_client(settings: Settings) -> GitHubClient:
    """The client for the configured handbook repository (ConfigError when unset)."""
    if not settings.handbook_owner or not settings.handbook_repo:
        raise ConfigError(
            "no handbook repository configured: set R42_HANDBOOK_OWNER and R42_HANDBOOK_REPO "
            "(and R42_HANDBOOK_PATH / R42_HANDBOOK_BRANCH if needed)"
        )
    token = settings.github_token.get_secret_value() if settings.github_token else None
    return GitHubClient(api_url=settings.github_api_url, owner=settings.handbook_owner,
                        repo=settings.handbook_repo, branch=settings.handbook_branch,
                        token=token)  # fmt: skip


def relative_name(path: str, root: str) -> str:
    """A file's name inside the handbook folder ("rollen/teamlead.md")."""
    root = root.strip("/")
    return path[len(root) + 1 :] if root and path.startswith(f"{root}/") else path


def asserter_of(name: str) -> str:
    """The provenance name of a handbook file."""
    return f"handbook:{name}"


async def extract_handbook_file(
    *, store: ExtractorStore, path: str, text: str, limiter: Limiter | None, options: ExtractOptions
) -> tuple[list[Topic], list[ExtractedRelation]]:
    """Every chunk of one file through the forced emit_handbook_delta tool."""
    chunks = chunk_text(
        text, max_chars=options.max_chunk_chars, overlap_chars=options.overlap_chars
    )
    topics: list[Topic] = []
    relations: list[ExtractedRelation] = []
    recent = await recent_topic_ids(store)
    for index, chunk in enumerate(chunks):
        known = [*recent, *(t.id for t in topics)]
        user = handbook_message(known_ids=known, path=path, text=chunk, index=index,
                                count=len(chunks))  # fmt: skip
        result = await ask_with_output_retries(
            task="extractor.handbook", retries=options.output_retries, tier="standard",
            system=HANDBOOK_SYSTEM, user=user, tools=[EMIT_HANDBOOK_DELTA],
            tool_choice=EMIT_HANDBOOK_DELTA, limiter=limiter,
            max_tokens=options.max_output_tokens,
        )  # fmt: skip
        delta = result.tool_uses[0].parsed
        assert isinstance(delta, HandbookDelta)
        chunk_topics, chunk_relations = to_bus_payload(delta.topics, delta.relations)
        topics.extend(chunk_topics)
        relations.extend(chunk_relations)
    return topics, relations


async def merge_file(
    *, store: ExtractorStore, name: str, file: RepoFile, topics: list[Topic],
    relations: list[ExtractedRelation],
) -> FileOutcome:  # fmt: skip
    """Merge one file's extraction (curated fields kept) and retract what it no longer says."""
    unburied = await without_tombstoned(store, topics, relations)  # deleted by an admin
    topics, relations = unburied.topics, unburied.relations
    plan, existing = await plan_against_store(store, topics, relations)
    metadata = {"source": HANDBOOK_SOURCE, "path": name, "blob_sha": file.sha,
                "prompt_version": PROMPT_VERSION}  # fmt: skip
    marks = await curation_marks(store, existing)
    upserts, suggestions = keep_curated(topics_for_store(plan, existing, metadata=metadata),
                                        existing, marks)  # fmt: skip
    for s in suggestions:
        log.info("%s: extraction differs from the curated %s of %s; kept the admin's",
                 name, s.field, s.topic_id)  # fmt: skip
    changes = KbChanges(topics_upsert=upserts, relations_upsert=relations_for_store(plan))
    asserted = asserted_by_result(plan, existing, topics, relations)
    reason = f"{name} would rewrite {plan.topics_updated} topics"
    if await hold_if_over_bound(store, key=f"handbook:{name}@{file.sha[:12]}",
                                asserter=asserter_of(name), updated_ids=list(plan.updated_ids),
                                changes=changes, asserted=asserted, reason=reason):  # fmt: skip
        return FileOutcome(path=file.path, status="held", topics_updated=plan.topics_updated,
                           error=f"held for review: it would rewrite {plan.topics_updated} "
                                 "existing topics (see `r42 graph held`)")  # fmt: skip
    asserter = asserter_of(name)
    await keep_file_pending(store, plan, asserter=asserter)  # before the write: never lost
    if not changes.empty:
        await store.apply_kb_changes(changes)
    await resolve_pending(store, (t.id for t in changes.topics_upsert))
    await count_skips(store, unburied.skipped, asserter=asserter)
    retraction = await replace_assertions(store, asserter_of(name), topics=asserted.topics,
                                          relations=asserted.relations)  # fmt: skip
    return FileOutcome(
        path=file.path, status="changed", topics_added=plan.topics_added,
        topics_updated=plan.topics_updated, relations_added=plan.relations_added,
        changed_ids=tuple(i for i in plan.changed_ids), removed_ids=tuple(retraction.removed_ids),
    )  # fmt: skip


async def sync_file(
    *,
    store: ExtractorStore,
    client: GitHubClient,
    file: RepoFile,
    settings: Settings,
    limiter: Limiter | None,
    options: ExtractOptions,
) -> FileOutcome:
    """Extract and merge one changed file; its sync state is saved only after the merge.

    An empty or unreadable file is skipped: what its earlier version asserted is retracted
    and its sha recorded, so it is not tried again until it changes.
    """
    name = relative_name(file.path, settings.handbook_path)
    try:
        if file.size > settings.max_upload_bytes:
            raise FormatError(f"{name} is larger than R42_MAX_UPLOAD_BYTES")
        document = read_document(await client.blob(file.sha), name=name,
                                 max_bytes=settings.max_upload_bytes)  # fmt: skip
    except (EmptyDocumentError, FormatError) as exc:
        retraction = await retract_all(store, asserter_of(name))
        await store.pending_merges.clear(asserter_of(name))
        await store.handbook_sync.put(file.path, file.sha)
        return FileOutcome(path=file.path, status="skipped", error=str(exc),
                           removed_ids=tuple(retraction.removed_ids))  # fmt: skip
    topics, relations = await extract_handbook_file(
        store=store, path=name, text=document.text, limiter=limiter, options=options
    )
    outcome = await merge_file(store=store, name=name, file=file, topics=topics,
                               relations=relations)  # fmt: skip
    await store.handbook_sync.put(file.path, file.sha)
    return outcome


async def _listing(store: ExtractorStore, client: GitHubClient, folder: str) -> list[RepoFile]:
    """The tree (one conditional request; the cached copy when GitHub answers 304)."""
    cache = await store.handbook_trees.get(client.where, folder)
    listing: TreeListing = await client.list_files(folder, etag=cache.etag if cache else None)
    if listing.not_modified and cache is not None:
        return [RepoFile(path=p, sha=s, size=n) for p, s, n in cache.files]
    await store.handbook_trees.put(HandbookTree(
        where=client.where, path=folder, etag=listing.etag,
        files=[(f.path, f.sha, f.size) for f in listing.files],
    ))  # fmt: skip
    return listing.files


async def _moves(
    store: ExtractorStore, files: list[RepoFile], synced: dict[str, str], root: str
) -> tuple[list[FileOutcome], set[str]]:
    """Renames (same blob at a new path) and deletions found in the tree."""
    present = {f.path for f in files}
    gone = {p: sha for p, sha in synced.items() if p not in present}
    fresh = {f.sha: f for f in files if f.path not in synced}
    outcomes: list[FileOutcome] = []
    renamed_to: set[str] = set()
    for path, sha in sorted(gone.items()):
        target = fresh.pop(sha, None)
        old_name = relative_name(path, root)
        if target is not None:
            old, new = asserter_of(old_name), asserter_of(relative_name(target.path, root))
            await rename_asserter(store, old, new)
            await move_pending(store, old, new)
            await store.handbook_sync.put(target.path, sha)
            await store.handbook_sync.delete(path)
            renamed_to.add(target.path)
            outcomes.append(FileOutcome(path=target.path, status="renamed", renamed_from=path))
            continue
        retraction: Retraction = await retract_all(store, asserter_of(old_name))
        await store.pending_merges.clear(asserter_of(old_name))
        await store.handbook_sync.delete(path)
        outcomes.append(FileOutcome(path=path, status="deleted",
                                    removed_ids=tuple(retraction.removed_ids)))  # fmt: skip
    return outcomes, renamed_to


async def sync_handbook(
    *,
    store: ExtractorStore,
    settings: Settings,
    limiter: Limiter | None,
    options: ExtractOptions,
    publish: Publish | None = None,
    client: GitHubClient | None = None,
    on_file: Callable[[FileOutcome], None] | None = None,
) -> SyncReport:
    """Sync the handbook folder: renames, deletions, then every file whose blob sha changed.

    A failing file is reported and left unsynced (the next sync tries it again); the others
    continue. A rate limit stops the sync at once (the rest is reported not tried).
    kb.updated follows when anything changed, with the changed and the removed ids.
    """
    own_client = client is None
    client = client or github_client(settings)
    report = SyncReport()

    def record(outcome: FileOutcome) -> None:
        report.files.append(outcome)
        if on_file is not None:
            on_file(outcome)

    try:
        listed = await _listing(store, client, settings.handbook_path)
        files = [f for f in listed if is_supported(f.path)]
        for other in (f for f in listed if not is_supported(f.path)):
            # Never fetched: reported with the rule every entry point gives.
            record(FileOutcome(path=other.path, status="skipped", error=unsupported(other.path)))
        synced = await store.handbook_sync.all()
        moves, renamed_to = await _moves(store, files, synced, settings.handbook_path)
        for outcome in moves:
            record(outcome)
        for file in files:
            if file.path in renamed_to:
                continue
            if report.rate_limited is not None:
                record(FileOutcome(path=file.path, status="not_tried"))
            elif synced.get(file.path) == file.sha:
                record(FileOutcome(path=file.path, status="unchanged"))
            else:
                try:
                    record(await sync_file(store=store, client=client, file=file,
                                           settings=settings, limiter=limiter,
                                           options=options))  # fmt: skip
                except RateLimitedError as exc:
                    report.rate_limited, report.rate_limit_reset = str(exc), exc.reset_at
                    record(FileOutcome(path=file.path, status="not_tried", error=str(exc)))
                except R42Error as exc:
                    log.warning("handbook file %s failed: %s", file.path, exc)
                    record(FileOutcome(path=file.path, status="failed",
                                       error=describe_error(exc)))  # fmt: skip
    finally:
        report.github_requests = client.requests
        if own_client:
            await client.aclose()
    report.files.sort(key=lambda f: f.path)
    if report.complete:  # only then can no file of the tree be the one a relation waits for
        report.waiting = await review_waiting(store)
    if publish is not None and (report.changed_ids or report.removed_ids):
        # A one-off admin action, never redelivered: a fresh event id.
        await publish_kb_updated(
            store, publish, changed_ids=report.changed_ids, removed_ids=report.removed_ids,
            reason="handbook synced", key=("handbook", uuid.uuid4().hex),
        )  # fmt: skip
    return report
