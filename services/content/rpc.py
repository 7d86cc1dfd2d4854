"""Serves `rpc.content.refine` (contract: shared/bus/content_rpc.py): an admin refines an article.

Admin status is checked here against the service's own admin list (R42_ADMINS; an empty
list means nobody); a request cannot claim it (an is_admin field is refused as unknown).
Errors come back as error replies; a missing topic or article is bad input (the requester
is told why).
"""

from __future__ import annotations

from collections.abc import Collection

from services.content.ports import ContentStore
from services.content.refine import refine_article
from shared.bus.content_rpc import REFINE_SUBJECT, RefineReply, RefineRequest
from shared.errors import BadInputError, NotFoundError

__all__ = ["REFINE_SUBJECT", "RefineReply", "RefineRequest", "answer_refine"]


async def answer_refine(
    request: RefineRequest, *, store: ContentStore, admins: Collection[str]
) -> RefineReply:
    """Refine for an admin; anyone else is refused before any model call."""
    if request.user_id not in admins:
        raise BadInputError("only admins can refine learning content")
    try:
        done = await refine_article(
            store, topic_ref=request.topic, instruction=request.instruction, admin=request.user_id
        )
    except NotFoundError as exc:
        # For the requester this is a bad request (shown to them), not a service fault.
        raise BadInputError(str(exc)) from exc
    return RefineReply(
        topic_id=done.topic.id,
        article=done.article.model_dump(mode="json"),
        applied=list(done.applied),
        offline=done.offline,
    )
