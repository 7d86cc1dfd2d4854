"""Deleting a source for an admin: the KG owner's preview and delete, worded in Dutch.

Both steps are `rpc.extractor.source_delete` requests; the owner checks the actor against
its own admin list, bounds the delete and audits it. Slack and the console word the reply
with the same lines here.
"""

from __future__ import annotations

from collections.abc import Sequence

from services.gateway.core.audit import audit
from services.gateway.core.context import CoreContext
from services.gateway.core.topics import NOT_SERVED
from shared.bus import NoResponderError, request
from shared.bus.source_rpc import SOURCE_DELETE_SUBJECT, SourceDeleteReply, SourceDeleteRequest
from shared.errors import BadInputError, BusError
from shared.store import AuditSurface

RPC_TIMEOUT_S = 60.0
REFUSED = "Alleen beheerders mogen bronnen verwijderen; de poging is vastgelegd."
BOUND_RULE = "10 % van de graaf, minstens 5, hoogstens 20"
_SHOWN = 8  # topic ids named per list in a line (the count is always whole): it fits Slack


async def ask_delete(
    ctx: CoreContext,
    *,
    source_id: str,
    user_id: str,
    surface: AuditSurface,
    confirm: bool,
    max_deletions: int | None = None,
) -> SourceDeleteReply:
    """The owner's preview (confirm False) or delete of one source; it authorises and audits."""
    try:
        body = SourceDeleteRequest(
            actor=user_id,
            surface=surface,
            source_id=source_id.strip(),
            confirm=confirm,
            max_deletions=max_deletions,
        )
    except ValueError:
        raise BadInputError(
            f"`{source_id[:80]}` is geen geldig bron-id (zie de bronnenlijst)"
        ) from None
    try:
        return await request(
            ctx.broker,
            SOURCE_DELETE_SUBJECT,
            body,
            response_model=SourceDeleteReply,
            timeout=RPC_TIMEOUT_S,
            namespace=ctx.namespace,
        )
    except NoResponderError:
        raise BusError(NOT_SERVED) from None


async def refuse(ctx: CoreContext, *, user_id: str, source_id: str, surface: AuditSurface) -> None:
    """Audit a delete a surface refused before asking the owner (a non-admin's button)."""
    await audit(
        ctx,
        actor=user_id,
        action="source.delete",
        target=source_id,
        allowed=False,
        surface=surface,
        after={"outcome": "refused", "detail": "not an admin"},
    )


def _ids(ids: Sequence[str], count: int) -> str:
    named = ", ".join(ids[:_SHOWN])
    more = f" en nog {count - min(count, _SHOWN)}" if count > _SHOWN else ""
    return f" ({named}{more})" if named else ""


def impact_line(reply: SourceDeleteReply) -> str:
    """What the delete takes (or took) and what stays for review."""
    line = (
        f"{reply.removed_count} onderwerp(en) die alleen deze bron noemt"
        f"{_ids(reply.removed, reply.removed_count)} en {reply.relations} relatie(s)"
    )
    if reply.flagged:
        line += (
            f"; {len(reply.flagged)} onderwerp(en) die een beheerder maakte of aanpaste "
            f"blijven staan, gemarkeerd voor beoordeling{_ids(reply.flagged, len(reply.flagged))}"
        )
    return line


def _name(reply: SourceDeleteReply, fallback: str = "") -> str:
    name = reply.source_name or fallback
    return name if len(name) <= 200 else "…" + name[-199:]  # the end of a path says most


def preview_text(reply: SourceDeleteReply) -> str:
    """The question before a delete: what goes, the bound, and that it can be undone."""
    return (
        f"Bron {_name(reply)} verwijderen? Dit gaat uit de kennisgraaf: "
        f"{impact_line(reply)}. De grens is {reply.bound} onderwerpen per keer "
        f"({BOUND_RULE}); je kunt het daarna ongedaan maken."
    )


def over_bound_text(reply: SourceDeleteReply, source_id: str) -> str:
    """A refusal over the bound: the reason and how to raise the bound explicitly."""
    n = reply.removed_count
    return (
        f"Bron {_name(reply)} verwijderen haalt {n} van de {reply.graph_size} "
        f"onderwerpen weg; de grens is {reply.bound} ({BOUND_RULE}). Er is niets "
        f"verwijderd. Klopt het, verhoog de grens dan expliciet naar {n}: met de knop "
        f"'Toch verwijderen', in de console met `/sources delete {source_id} "
        f"--max-deletions {n}` of met `r42 sources delete {source_id} --max-deletions {n}`."
    )


def outcome_text(reply: SourceDeleteReply, source_id: str) -> str:
    """One Dutch line for any outcome of a delete request."""
    if reply.outcome == "preview":
        return preview_text(reply)
    if reply.outcome == "done":
        return (
            f"Bron {_name(reply)} is verwijderd: {impact_line(reply)}. Ongedaan "
            f"maken: `r42 graph undo {reply.undo_id}`."
        )
    if reply.outcome == "already_deleted":
        return (
            f"Bron {_name(reply, source_id)} was al verwijderd (ongedaan maken: "
            f"`r42 graph undo {reply.undo_id}`)."
        )
    if reply.outcome == "over_bound":
        return over_bound_text(reply, source_id)
    if reply.outcome == "busy":
        return f"Bron {_name(reply)} wordt nog ingelezen; annuleer hem eerst."
    if reply.outcome == "not_found":
        return f"Bron `{source_id}` bestaat niet (meer); zie de bronnenlijst."
    return REFUSED
