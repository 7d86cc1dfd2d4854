"""Graph-delta proposals made in chat, and the user's (or admin's) decision on them.

A proposal is stored under the settings key `proposal:<id>` as
`{kind, id, delta, summary, proposed_by, created_at, prompt_version, status, ...}` with
status `open` until decided. Deciding is a compare-and-set on that record (open →
applied | pending_review | declined), so a second decision answers `already_decided`.

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
from typing import Any

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
from shared.store import Suggestion, utcnow

log = logging.getLogger(__name__)

KEY_PREFIX = "proposal:"
RECORD_KIND = "r42-proposal"
PROPOSAL_TTL = timedelta(days=7)
SUMMARY_CHARS = 3000

Publish = Callable[[Event], Awaitable[None]]


def proposal_key(proposal_id: str) -> str:
    """The settings key a proposal is stored under."""
    return f"{KEY_PREFIX}{proposal_id}"


def suggestion_id_for(proposal_id: str) -> str:
    """The suggestion id an accepted proposal gets (stable, so retries stay idempotent)."""
    return f"r42-{proposal_id}"


def effective_admin(is_admin: bool, user_id: str, admins: Collection[str]) -> bool:
    """The caller's admin flag, unless a configured admin list says otherwise."""
    if is_admin and admins and user_id not in admins:
        log.warning("user %s claims admin but is not in the admin list: treated as a user", user_id)
        return False
    return is_admin


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
    record = {
        "kind": RECORD_KIND,
        "id": proposal_id,
        "delta": kb_delta.model_dump(mode="json"),
        "summary": summary,
        "proposed_by": proposed_by,
        "created_at": (now or utcnow()).isoformat(),
        "prompt_version": PROMPT_VERSION,
        "status": "open",
    }
    await store.settings.set(proposal_key(proposal_id), record)
    return Proposal(id=proposal_id, delta=kb_delta, summary=summary)


def _expired(record: dict[str, Any], now: datetime) -> bool:
    try:
        created = datetime.fromisoformat(str(record.get("created_at")))
    except ValueError:
        return True
    return now - created > PROPOSAL_TTL


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
    key = proposal_key(request.proposal_id)
    record = await store.settings.get(key)
    if not isinstance(record, dict) or record.get("kind") != RECORD_KIND:
        return _reply("not_found")
    is_admin = effective_admin(request.is_admin, request.user_id, admins)
    if record.get("proposed_by") != request.user_id and not is_admin:
        raise BadInputError("only the user the proposal was made to, or an admin, can decide it")
    if record.get("status") != "open":
        return _reply("already_decided", record.get("suggestion_id"))
    if _expired(record, now):
        return _reply("not_found")

    status = "declined" if not request.accept else "applied" if is_admin else "pending_review"
    suggestion_id = suggestion_id_for(request.proposal_id) if request.accept else None
    token = uuid.uuid4().hex
    decided = {
        "status": status,
        "decided_by": request.user_id,
        "decided_at": now.isoformat(),
        "suggestion_id": suggestion_id,
        "decision_token": token,
    }

    def claim(current: Any) -> Any:
        if isinstance(current, dict) and current.get("status") == "open":
            return {**current, **decided}
        return current

    stored = await store.settings.update(key, claim)
    if not (isinstance(stored, dict) and stored.get("decision_token") == token):
        return _reply("already_decided", (stored or {}).get("suggestion_id"))
    if suggestion_id is not None:
        try:
            await _forward(
                store=store, publish=publish, record=record, suggestion_id=suggestion_id,
                decided_by=request.user_id, approve=is_admin,
            )  # fmt: skip
        except Exception as exc:
            await _reopen(store, key, token)
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
    record: dict[str, Any],
    suggestion_id: str,
    decided_by: str,
    approve: bool,
) -> None:
    delta = KbDelta.model_validate(record["delta"])
    proposal_id = str(record["id"])
    await store.suggestions.create(
        Suggestion(
            id=suggestion_id,
            delta=delta.model_dump(mode="json"),
            proposed_by=str(record["proposed_by"]),
            context={
                "origin": "r42-chat",
                "proposal_id": proposal_id,
                "accepted_by": decided_by,
                "summary": record.get("summary", ""),
                "prompt_version": record.get("prompt_version"),
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
            proposed_by=str(record["proposed_by"]),
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


async def _reopen(store: R42Store, key: str, token: str) -> None:
    drop = {"decided_by", "decided_at", "suggestion_id", "decision_token"}

    def reopen(current: Any) -> Any:
        if isinstance(current, dict) and current.get("decision_token") == token:
            return {k: v for k, v in current.items() if k not in drop} | {"status": "open"}
        return current

    try:
        await store.settings.update(key, reopen)
    except Exception:  # the original failure is what the caller must hear about
        log.exception("could not reopen proposal %s", key)
