"""Stale content: older prompt versions, changed or removed topics; listing and regenerating.

A part is stale when its `prompt_version` predates the running PROMPT_VERSION, when the
topic's fingerprint (label + description) differs from the one stored with the part, or
when the row was flagged stale. The row flag (`store.content.mark_stale`) is set on
`kb.updated` and at service start so other readers see it; the per-part check is what
decides, because regenerating one part clears the row flag.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from services.content.generate import KINDS, ensure_content, part_meta, part_of, stale_reasons
from services.content.locks import topic_lease
from services.content.ports import ContentStore
from services.content.topics import LearningTopic, custom_topics, from_kg, get_topic
from shared.errors import R42Error

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class StaleItem:
    """One stale part and why."""

    topic_id: str
    kind: str
    reasons: tuple[str, ...]
    refined: bool = False


@dataclass(frozen=True)
class RegenResult:
    """What a regeneration did for one topic."""

    topic_id: str
    kinds: tuple[str, ...]
    error: str | None = None


async def _known_topics(store: ContentStore) -> dict[str, LearningTopic]:
    known = {t.id: from_kg(t) for t in await store.topics.list()}
    for topic_id in await custom_topics(store):
        if topic_id not in known:
            found = await get_topic(store, topic_id)
            if found is not None:
                known[topic_id] = found
    return known


async def find_stale(store: ContentStore) -> list[StaleItem]:
    """Every stale part, by topic id then kind (reads only)."""
    known = await _known_topics(store)
    items: list[StaleItem] = []
    for topic_id in sorted(set(known) | set(await store.content.list_stale())):
        content = await store.content.get(topic_id)
        if content is None:
            continue
        for kind in KINDS:
            reasons = stale_reasons(content, kind, known.get(topic_id))
            if reasons:
                refined = bool(part_meta(content, kind).get("refinements"))
                items.append(StaleItem(topic_id, kind, tuple(reasons), refined))
    return items


async def mark_stale_content(store: ContentStore) -> list[StaleItem]:
    """Flag every row with a stale part (service start-up); returns the stale parts."""
    items = await find_stale(store)
    if items:
        await store.content.mark_stale({item.topic_id for item in items})
    return items


async def on_kb_updated(store: ContentStore, *, changed_ids: Sequence[str]) -> list[str]:
    """Flag content of changed topics whose text differs from generation (all if none given)."""
    ids: Iterable[str] = changed_ids or sorted(
        (await store.topics.ids()) | set(await custom_topics(store))
    )
    flagged = []
    for topic_id in ids:
        content = await store.content.get(topic_id)
        if content is None:
            continue
        topic = await get_topic(store, topic_id)
        if any(
            part_of(content, kind) is not None
            and (topic is None or part_meta(content, kind).get("topic_fingerprint")
                 != topic.fingerprint)
            for kind in KINDS
        ):  # fmt: skip
            flagged.append(topic_id)
    if flagged:
        await store.content.mark_stale(flagged)
    return flagged


async def regenerate(
    store: ContentStore, *, topic_ids: Sequence[str] = (), stale_only: bool = False
) -> list[RegenResult]:
    """Regenerate stale parts (stale_only) or every stored part of the given topics."""
    stale = await find_stale(store) if stale_only else []
    targets: dict[str, list[str]] = {}
    if stale_only:
        for item in stale:
            if not topic_ids or item.topic_id in topic_ids:
                targets.setdefault(item.topic_id, []).append(item.kind)
    else:
        for topic_id in topic_ids:
            content = await store.content.get(topic_id)
            present: list[str] = [k for k in KINDS if part_of(content, k) is not None]
            targets[topic_id] = present or [*KINDS]
    return await _regenerate_targets(store, targets, whole_as_all=True)


async def regenerate_parts(
    store: ContentStore, parts: Sequence[tuple[str, str]]
) -> list[RegenResult]:
    """Regenerate exactly these (topic id, kind) parts, topic by topic."""
    targets: dict[str, list[str]] = {}
    for topic_id, kind in parts:
        if kind in KINDS and kind not in targets.setdefault(topic_id, []):
            targets[topic_id].append(kind)
    return await _regenerate_targets(store, targets, whole_as_all=False)


async def _regenerate_targets(
    store: ContentStore, targets: dict[str, list[str]], *, whole_as_all: bool
) -> list[RegenResult]:
    """Regenerate each topic's kinds; with whole_as_all a topic's every kind is one "all" run."""
    results = []
    for topic_id, kinds in targets.items():
        topic = await get_topic(store, topic_id)
        if topic is None:
            results.append(RegenResult(topic_id, (), "no topic with this id (KG or custom)"))
            continue
        whole = whole_as_all and len(kinds) == len(KINDS)
        done: list[str] = []
        try:
            # The topic's lease, as for a request: a generation running elsewhere finishes
            # first, and a replica stalled past the lease neither calls nor writes.
            async with topic_lease(store, topic.id) as lease:
                for kind in ["all"] if whole else kinds:
                    outcome = await ensure_content(
                        store, topic=topic, content_type=kind, force=True, lease=lease
                    )
                    done.extend(outcome.generated)
        except R42Error as exc:
            log.warning("regenerating %s failed: %s", topic_id, exc)
            results.append(RegenResult(topic_id, tuple(done), str(exc)))
            continue
        results.append(RegenResult(topic_id, tuple(done)))
    return results
