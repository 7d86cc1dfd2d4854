"""Graph-delta proposals made in chat, and the user's (or admin's) decision on them.

A proposal is stored in the store's proposals repository with status `open` until
decided. Deciding is a compare-and-set there (open → applied | pending_review |
declined), so a second decision answers `already_decided`.

Accepting creates a pending Suggestion (id `r42-<proposal id>`) and publishes
`kb.delta.proposed`; an admin's accept also publishes `kb.delta.decided` (approved, by
that admin), and the extractor — the KG's one writer — re-validates, applies it, marks the
suggestion decided and publishes `kb.updated`. Event ids are derived from the suggestion
id, so a retry after a partial failure re-publishes the same events (JetStream dedupes)
and the suggestion create is idempotent. If forwarding fails, the decision is rolled back
to open and a TransientError tells the caller to try again.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Awaitable, Callable, Collection
from datetime import datetime, timedelta

from services.r42.ports import R42Store
from services.r42.prompts import PROMPT_VERSION
from shared.bus import (
    Event,
    KbDelta,
    KbDeltaDecided,
    KbDeltaProposed,
    Proposal,
    ProposalDecisionReply,
    ProposalDecisionRequest,
    derived_event_id,
)
from shared.errors import BadInputError, TransientError
from shared.kb import GraphDelta
from shared.store import ChatProposal, DecidedStatus, Suggestion, utcnow

log = logging.getLogger(__name__)

PROPOSAL_TTL = timedelta(days=7)
SUMMARY_CHARS = 3000

Publish = Callable[[Event], Awaitable[None]]


def suggestion_id_for(proposal_id: str) -> str:
    """The suggestion id an accepted proposal gets (stable, so retries stay idempotent)."""
    return f"r42-{proposal_id}"


def effective_admin(user_id: str, admins: Collection[str]) -> bool:
    """Whether the user is on the service's own admin list (an empty list: nobody)."""
    return user_id in admins


def to_kb_delta(delta: GraphDelta) -> KbDelta:
    """The bus form of a validated delta."""
    return KbDelta.model_validate(delta.model_dump(mode="json"))


_TYPE_NL = {"concept": "begrip", "role": "rol", "process": "proces"}


def summarize_delta(delta: GraphDelta | KbDelta) -> str:
    """A one-paragraph Dutch summary of what the delta adds."""
    parts = [
        f"nieuw onderwerp {t.label} [{t.id}] ({_TYPE_NL.get(t.type, t.type)})" for t in delta.topics
    ]
    parts += [f"relatie {r.source} {r.type} {r.target}" for r in delta.relations]
    text = "; ".join(parts)
    text = text[:1].upper() + text[1:]
    return f"{text}. Reden: {delta.reason}"[:SUMMARY_CHARS]


async def save_proposal(
    *, store: R42Store, delta: GraphDelta, proposed_by: str, now: datetime | None = None
) -> Proposal:
    """Store a validated delta as an open proposal and return it for the chat reply."""
    proposal_id = f"prop-{uuid.uuid4().hex[:16]}"
    kb_delta = to_kb_delta(delta)
    summary = summarize_delta(kb_delta)
    await store.proposals.create(
        ChatProposal(
            id=proposal_id, delta=kb_delta.model_dump(mode="json"), summary=summary,
            proposed_by=proposed_by, prompt_version=PROMPT_VERSION, created_at=now or utcnow(),
        )
    )  # fmt: skip
    return Proposal(id=proposal_id, delta=kb_delta, summary=summary)


def _expired(proposal: ChatProposal, now: datetime) -> bool:
    return proposal.created_at is None or now - proposal.created_at > PROPOSAL_TTL


_MESSAGES = {
    "applied": "Het voorstel is goedgekeurd en wordt nu in de kennisgraaf verwerkt.",
    "pending_review": "Dank je! Je voorstel staat klaar voor een beheerder.",
    "declined": "Oké, het voorstel is niet ingediend.",
    "not_found": "Dat voorstel bestaat niet (meer); het kan verlopen zijn.",
    "already_decided": "Over dit voorstel is al besloten.",
}


def _reply(status: str, suggestion_id: str | None = None) -> ProposalDecisionReply:
    return ProposalDecisionReply(
        status=status,  # type: ignore[arg-type]
        suggestion_id=suggestion_id,
        message=_MESSAGES[status],
    )


async def decide_proposal(
    *,
    store: R42Store,
    publish: Publish,
    request: ProposalDecisionRequest,
    admins: Collection[str] = (),
    now: datetime | None = None,
) -> ProposalDecisionReply:
    """Apply the user's Yes / No: admins apply at once, users queue for review, No declines."""
    now = now or utcnow()
    proposal = await store.proposals.get(request.proposal_id)
    if proposal is None:
        return _reply("not_found")
    is_admin = effective_admin(request.user_id, admins)
    if proposal.proposed_by != request.user_id and not is_admin:
        raise BadInputError("only the user the proposal was made to, or an admin, can decide it")
    if proposal.status != "open":
        return _reply("already_decided", proposal.suggestion_id)
    if _expired(proposal, now):
        return _reply("not_found")

    status: DecidedStatus = (
        "declined" if not request.accept else "applied" if is_admin else "pending_review"
    )
    suggestion_id = suggestion_id_for(request.proposal_id) if request.accept else None
    decided = await store.proposals.decide(
        request.proposal_id, status=status, by=request.user_id, suggestion_id=suggestion_id,
        now=now,
    )  # fmt: skip
    if decided is None or decided.decision_token is None:  # another decision won the race
        current = await store.proposals.get(request.proposal_id)
        return _reply("already_decided", current.suggestion_id if current else None)
    if suggestion_id is not None:
        try:
            await _forward(
                store=store, publish=publish, proposal=proposal, suggestion_id=suggestion_id,
                decided_by=request.user_id, approve=is_admin,
            )  # fmt: skip
        except Exception as exc:
            await _reopen(store, request.proposal_id, decided.decision_token)
            log.warning("proposal %s: forwarding failed, reopened: %s", request.proposal_id, exc)
            raise TransientError(
                "the proposal could not be forwarded right now; please try again"
            ) from exc
    log.info("proposal %s %s by %s", request.proposal_id, status, request.user_id)
    return _reply(status, suggestion_id)


async def _forward(
    *,
    store: R42Store,
    publish: Publish,
    proposal: ChatProposal,
    suggestion_id: str,
    decided_by: str,
    approve: bool,
) -> None:
    delta = KbDelta.model_validate(proposal.delta)
    proposal_id = proposal.id
    await store.suggestions.create(
        Suggestion(
            id=suggestion_id,
            delta=delta.model_dump(mode="json"),
            proposed_by=proposal.proposed_by,
            context={
                "origin": "r42-chat",
                "proposal_id": proposal_id,
                "accepted_by": decided_by,
                "summary": proposal.summary,
                "prompt_version": proposal.prompt_version,
            },
        )
    )
    await publish(
        KbDeltaProposed(
            event_id=derived_event_id(KbDeltaProposed.SUBJECT, suggestion_id),
            correlation_id=proposal_id,
            actor=decided_by,
            suggestion_id=suggestion_id,
            delta=delta,
            proposed_by=proposal.proposed_by,
        )
    )
    if approve:
        await publish(
            KbDeltaDecided(
                event_id=derived_event_id(KbDeltaDecided.SUBJECT, suggestion_id),
                correlation_id=proposal_id,
                actor=decided_by,
                suggestion_id=suggestion_id,
                decision="approved",
                decided_by=decided_by,
                delta=delta,
            )
        )


async def _reopen(store: R42Store, proposal_id: str, token: str) -> None:
    try:
        await store.proposals.reopen(proposal_id, decision_token=token)
    except Exception:  # the original failure is what the caller must hear about
        log.exception("could not reopen proposal %s", proposal_id)
