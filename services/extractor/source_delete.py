"""Deleting a source for an admin on a chat surface (`rpc.extractor.source_delete`).

The preview says what a delete would do: the topics only this source asserts leave the graph
(those an admin made or curated stay, flagged for review) with the relations only it asserts
or that touch a leaving topic. The delete itself is lifecycle.delete_source, as for
`r42 sources delete`: bounded, with a before-image for `r42 graph undo`. Authorised here
against the owner's admin rule (never a request field); every attempt is audited.
"""

from __future__ import annotations

from collections.abc import Callable

from services.extractor.handlers import ExtractorDeps
from services.extractor.lifecycle import delete_source, preview_delete
from services.extractor.outcomes import Publish
from services.extractor.ports import ExtractorStore
from services.extractor.undo import bulk_bound
from shared.bus.source_rpc import (
    MAX_LISTED,
    SOURCE_DELETE_SUBJECT,
    SourceDeleteReply,
    SourceDeleteRequest,
)
from shared.errors import BadInputError
from shared.runtime.service import Rpc
from shared.store import AuditEntry

ACTION = "source.delete"
IsAdmin = Callable[[str], bool]
RUNNING = frozenset({"pending", "processing"})
_RECENT = 200  # the actor's audit entries searched for an earlier delete (a double click)


def source_rpcs(deps: ExtractorDeps) -> list[Rpc]:
    """The delete rpc: one at a time (it reads what goes, then writes)."""

    async def on_delete(request: SourceDeleteRequest) -> SourceDeleteReply:
        return await answer_source_delete(
            request, store=deps.store, publish=deps.publish, is_admin=deps.is_admin
        )

    return [Rpc(SOURCE_DELETE_SUBJECT, SourceDeleteRequest, on_delete, max_concurrency=1)]


async def answer_source_delete(
    request: SourceDeleteRequest,
    *,
    store: ExtractorStore,
    publish: Publish | None,
    is_admin: IsAdmin,
) -> SourceDeleteReply:
    """Authorise, preview or delete, and audit; the reply says how it went."""
    if not is_admin(request.actor):
        reply = SourceDeleteReply(outcome="refused", detail=f"{request.actor} is not an admin")
        await _audit(store, request, reply, allowed=False)
        return reply
    reply = await _answer(request, store=store, publish=publish)
    if request.confirm:
        await _audit(store, request, reply, allowed=True)
    return reply


async def _answer(
    request: SourceDeleteRequest, *, store: ExtractorStore, publish: Publish | None
) -> SourceDeleteReply:
    source = await store.sources.get(request.source_id)
    if source is None:
        earlier = await _earlier_delete(store, request) if request.confirm else None
        return earlier or SourceDeleteReply(
            outcome="not_found", detail=f"no source {request.source_id!r}"
        )
    name = source.name[:500]
    if source.status in RUNNING:
        return SourceDeleteReply(outcome="busy", detail=f"source is {source.status}",
                                 source_name=name)  # fmt: skip
    preview = await preview_delete(store, request.source_id)
    size = (await store.topics.counts()).total
    bound = request.max_deletions if request.max_deletions is not None else bulk_bound(size)
    shown = SourceDeleteReply(
        outcome="preview", source_name=name, removed=preview.removed[:MAX_LISTED],
        removed_count=len(preview.removed), flagged=preview.flagged[:MAX_LISTED],
        relations=preview.relations, graph_size=size, bound=bound,
    )  # fmt: skip
    if not request.confirm:
        return shown
    if shown.over_bound:
        return shown.model_copy(update={"outcome": "over_bound"})
    try:
        removed, undo_id = await delete_source(
            store=store, source_id=request.source_id, publish=publish, max_deletions=bound
        )
    except BadInputError as exc:  # the graph moved between the preview and the delete
        return shown.model_copy(update={"outcome": "over_bound", "detail": str(exc)[:2000]})
    return shown.model_copy(update={"outcome": "done", "undo_id": undo_id,
                                    "removed": removed[:MAX_LISTED],
                                    "removed_count": len(removed)})  # fmt: skip


async def _earlier_delete(
    store: ExtractorStore, request: SourceDeleteRequest
) -> SourceDeleteReply | None:
    """This actor's own earlier delete of the source (a second click): its result again."""
    for entry in await store.audit.latest(limit=_RECENT, actor=request.actor):
        after = entry.after or {}
        if (
            entry.action == ACTION
            and entry.target == request.source_id
            and entry.allowed
            and (after.get("outcome") == "done")
        ):
            reply = SourceDeleteReply.model_validate({**after, "outcome": "already_deleted"})
            return reply
    return None


async def _audit(
    store: ExtractorStore, request: SourceDeleteRequest, reply: SourceDeleteReply, *, allowed: bool
) -> None:
    after = reply.model_dump(mode="json", exclude={"detail"} if reply.outcome == "done" else None)
    if reply.outcome != "done":
        after = {"outcome": reply.outcome, "detail": reply.detail,
                 "max_deletions": request.max_deletions}  # fmt: skip
    await store.audit.record(
        AuditEntry(
            actor=request.actor,
            action=ACTION,
            target=request.source_id,
            allowed=allowed,
            after=after,
            surface=request.surface,
        )
    )
