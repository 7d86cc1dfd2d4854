"""Handbook sync: extract the GitHub handbook's changed files into the knowledge graph."""

from __future__ import annotations

import logging
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal

from services.extractor.config import ExtractOptions
from services.extractor.github import GitHubClient, RepoFile
from services.extractor.merge import plan_against_store, relations_for_store, topics_for_store
from services.extractor.outcomes import Publish, publish_kb_updated
from services.extractor.pipeline import ask_with_output_retries, to_bus_payload
from services.extractor.ports import ExtractorStore
from services.extractor.prompts import HANDBOOK_SYSTEM, PROMPT_VERSION, handbook_message
from services.extractor.runner import describe_error
from services.extractor.tools import EMIT_HANDBOOK_DELTA, HandbookDelta
from services.extractor.uploads import decode_upload
from shared.bus import ExtractedRelation, Topic
from shared.config import Settings
from shared.errors import ConfigError, R42Error
from shared.kb import chunk_text
from shared.llm import Limiter
from shared.store import KbChanges

log = logging.getLogger(__name__)

HANDBOOK_SOURCE = "github_handbook"


@dataclass(frozen=True)
class FileOutcome:
    """What the sync did with one handbook file."""

    path: str
    status: Literal["changed", "unchanged", "failed"]
    topics_added: int = 0
    topics_updated: int = 0
    relations_added: int = 0
    error: str | None = None
    changed_ids: tuple[str, ...] = ()


@dataclass
class SyncReport:
    """Every file's outcome, in path order."""

    files: list[FileOutcome] = field(default_factory=list)

    def count(self, status: str) -> int:
        """How many files ended with this status."""
        return sum(1 for f in self.files if f.status == status)

    @property
    def changed_ids(self) -> list[str]:
        """Topic ids the sync added or changed."""
        return sorted({i for f in self.files for i in f.changed_ids})


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


async def extract_handbook_file(
    *, store: ExtractorStore, path: str, text: str, limiter: Limiter | None, options: ExtractOptions
) -> tuple[list[Topic], list[ExtractedRelation]]:
    """Every chunk of one file through the forced emit_handbook_delta tool."""
    chunks = chunk_text(
        text, max_chars=options.max_chunk_chars, overlap_chars=options.overlap_chars
    )
    topics: list[Topic] = []
    relations: list[ExtractedRelation] = []
    for index, chunk in enumerate(chunks):
        known = [*sorted(await store.topics.ids()), *(t.id for t in topics)]
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


async def sync_file(
    *,
    store: ExtractorStore,
    client: GitHubClient,
    file: RepoFile,
    settings: Settings,
    limiter: Limiter | None,
    options: ExtractOptions,
) -> FileOutcome:
    """Extract and merge one changed file; its sync state is saved only after the merge."""
    if file.size > settings.max_upload_bytes:
        raise ConfigError(f"{file.path} is larger than R42_MAX_UPLOAD_BYTES; skipped")
    text = decode_upload(await client.blob(file.sha), name=file.path,
                         max_bytes=settings.max_upload_bytes)  # fmt: skip
    topics, relations = await extract_handbook_file(
        store=store, path=file.path, text=text, limiter=limiter, options=options
    )
    plan, existing = await plan_against_store(store, topics, relations)
    metadata = {"source": HANDBOOK_SOURCE, "path": file.path, "blob_sha": file.sha,
                "prompt_version": PROMPT_VERSION}  # fmt: skip
    changes = KbChanges(topics_upsert=topics_for_store(plan, existing, metadata=metadata),
                        relations_upsert=relations_for_store(plan))  # fmt: skip
    if not changes.empty:
        await store.apply_kb_changes(changes)
    await store.handbook_sync.put(file.path, file.sha)
    return FileOutcome(
        path=file.path, status="changed", topics_added=plan.topics_added,
        topics_updated=plan.topics_updated, relations_added=plan.relations_added,
        changed_ids=plan.changed_ids,
    )  # fmt: skip


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
    """Sync every markdown file whose blob sha changed since the last sync.

    A failing file is reported and left unsynced (its state is not saved, so the next sync
    tries it again); the others continue. kb.updated follows when anything changed.
    """
    own_client = client is None
    client = client or github_client(settings)
    report = SyncReport()
    try:
        files = await client.list_markdown(settings.handbook_path)
        synced = await store.handbook_sync.all()
        for file in files:
            if synced.get(file.path) == file.sha:
                outcome = FileOutcome(path=file.path, status="unchanged")
            else:
                try:
                    outcome = await sync_file(store=store, client=client, file=file,
                                              settings=settings, limiter=limiter,
                                              options=options)  # fmt: skip
                except R42Error as exc:
                    log.warning("handbook file %s failed: %s", file.path, exc)
                    outcome = FileOutcome(path=file.path, status="failed",
                                          error=describe_error(exc))  # fmt: skip
            report.files.append(outcome)
            if on_file is not None:
                on_file(outcome)
    finally:
        if own_client:
            await client.aclose()
    if publish is not None and report.changed_ids:
        # A one-off admin action, never redelivered: a fresh event id.
        await publish_kb_updated(
            store, publish, changed_ids=report.changed_ids, reason="handbook synced",
            key=("handbook", uuid.uuid4().hex),
        )  # fmt: skip
    return report
