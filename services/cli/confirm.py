"""`r42 ask --confirm` / `--decline` (or `ja` / `nee` as the next message): decide a proposal.

The decision goes where every surface sends it: the running R42 service (rpc.r42.proposal),
which checks the admin list itself, so an admin's Yes applies and anyone else's waits for
review. Without a running stack the proposal is decided here on the store, and always
queued for review: applying is the extractor's job, and no extractor is running.
"""

from __future__ import annotations

from datetime import datetime

from shared.bus import (
    PROPOSAL_SUBJECT,
    Event,
    KbDeltaProposed,
    ProposalDecisionReply,
    ProposalDecisionRequest,
    request,
)
from shared.config import Settings
from shared.errors import BadInputError
from shared.store import ChatProposal, Store, utcnow

YES_WORDS = frozenset({"ja", "j", "jawel", "yes", "y", "ok", "oké", "akkoord", "bevestig"})
NO_WORDS = frozenset({"nee", "n", "no", "liever niet"})
STATUS_LINES = {
    "applied": "applied: the knowledge graph is being updated",
    "pending_review": "queued for review by an admin (see `/suggestions` in the console)",
    "declined": "declined: nothing was submitted",
    "not_found": "not found (it may have expired)",
    "already_decided": "already decided",
}


def yes_or_no(text: str) -> bool | None:
    """True for a plain yes ("ja"), False for a plain no ("nee"), else None."""
    word = " ".join(text.lower().strip(" .!?,").split())
    return True if word in YES_WORDS else False if word in NO_WORDS else None


async def open_proposal(
    store: Store, *, user_id: str, proposal_id: str | None, now: datetime | None = None
) -> ChatProposal | None:
    """The proposal to decide: the one named, else the user's newest open one."""
    if proposal_id is not None:
        return await store.proposals.get(proposal_id)
    from services.r42.proposals import PROPOSAL_TTL

    now = now or utcnow()
    for proposal in await store.proposals.list(status="open", limit=100):
        fresh = proposal.created_at is not None and now - proposal.created_at <= PROPOSAL_TTL
        if proposal.proposed_by == user_id and fresh:
            return proposal
    return None


async def decide(
    settings: Settings, *, user_id: str, proposal_id: str | None, accept: bool
) -> tuple[ChatProposal | None, ProposalDecisionReply | None]:
    """Decide the user's proposal; (None, None) when there is none to decide."""
    from services.extractor.session import admin_session

    async with admin_session(settings) as session:
        proposal = await open_proposal(session.store, user_id=user_id, proposal_id=proposal_id)
        if proposal is None:
            return None, None
        decision = ProposalDecisionRequest(proposal_id=proposal.id, user_id=user_id, accept=accept)
        if session.broker is not None:
            reply = await request(
                session.broker, PROPOSAL_SUBJECT, decision,
                response_model=ProposalDecisionReply, timeout=30.0, namespace=session.namespace,
            )  # fmt: skip
            return proposal, reply
        from services.r42.proposals import decide_proposal

        async def publish(event: Event) -> None:
            # Only the log-only kb.delta.proposed can be sent (admins=() below): the
            # suggestion itself is in the store, where admins review it.
            if not isinstance(event, KbDeltaProposed):
                raise BadInputError(f"{event.SUBJECT} needs the running stack (`r42 up`)")

        reply = await decide_proposal(
            store=session.store, publish=publish, request=decision, admins=()
        )
        return proposal, reply


__all__ = ["NO_WORDS", "STATUS_LINES", "YES_WORDS", "decide", "open_proposal", "yes_or_no"]
