"""The extractor's answer to `rpc.extractor.sync_handbook` (an admin's sync from Slack)."""

from __future__ import annotations

import asyncio

from services.extractor.handbook import sync_handbook
from services.extractor.handlers import ExtractorDeps
from shared.bus.extractor_rpc import SHOWN_WAITING, HandbookSyncReply, HandbookSyncRequest
from shared.errors import BadInputError


async def answer_sync(
    request: HandbookSyncRequest, *, deps: ExtractorDeps, lock: asyncio.Lock
) -> HandbookSyncReply:
    """Sync the handbook for an admin; one sync at a time per replica."""
    # Authorised here against the admin list only (the request carries no admin claim):
    # an unlisted user is refused, and an empty list means nobody.
    if request.user_id not in deps.settings.admins:
        raise BadInputError("alleen beheerders kunnen het handboek synchroniseren")
    if not (deps.settings.handbook_owner and deps.settings.handbook_repo):
        raise BadInputError(
            "er is geen handboek ingesteld: zet R42_HANDBOOK_OWNER en R42_HANDBOOK_REPO"
        )
    if lock.locked():
        raise BadInputError("er loopt al een handboek-synchronisatie; probeer het straks opnieuw")
    async with lock:
        report = await sync_handbook(
            store=deps.store, settings=deps.settings, limiter=deps.limiter,
            options=deps.options, publish=deps.publish,
        )  # fmt: skip
    failed = [f for f in report.files if f.status == "failed"]
    skipped = [f for f in report.files if f.status == "skipped"]
    message = "; ".join(f"{f.path}: {f.error}" for f in failed[:5])
    if report.rate_limited:  # Dutch, like every reply an admin reads in Slack
        reset = report.rate_limit_reset
        when = f"; probeer het na {reset:%H:%M} UTC opnieuw" if reset else ""
        message = f"gestopt: de GitHub-limiet is bereikt{when}. {message}".strip()
    return HandbookSyncReply(
        changed=report.count("changed"), unchanged=report.count("unchanged"),
        failed=len(failed), message=message[:4000], skipped=len(skipped),
        skipped_shown=[f.path[-500:] for f in skipped[:SHOWN_WAITING]],
        waiting=report.waiting.summary() if report.waiting is not None else None,
    )  # fmt: skip
