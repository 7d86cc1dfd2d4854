"""Knowledge-graph proposals in Slack: the Yes / No chip, admin reviews, Approve / Reject."""

from __future__ import annotations

import logging

from services.gateway.core import user_message
from services.gateway.slack import ids
from services.gateway.slack.api import Blocks
from services.gateway.slack.blocks import chat as bc
from services.gateway.slack.blocks.kit import context, mention
from services.gateway.slack.gateway import Reply, SlackGateway
from shared.bus import KbDelta

log = logging.getLogger(__name__)


async def proposal_click(
    gw: SlackGateway, *, user: str, proposal_id: str, accept: bool, blocks: Blocks, reply: Reply
) -> None:
    """Yes / No on a chip: ask r42, show the outcome, send non-admin Yes to the admins."""
    try:
        result = await gw.client.chat.decide_proposal(
            proposal_id=proposal_id, user_id=user, accept=accept
        )
    except Exception as exc:
        await reply.private(user_message(exc))
        return
    if result.status in ("not_found", "already_decided"):
        await reply.private(bc.PROPOSAL_OUTCOMES[result.status])
        return
    await reply.update(
        bc.proposal_outcome(blocks, status=result.status, user_id=user), bc.PROPOSAL_QUESTION
    )
    if result.status == "pending_review" and result.suggestion_id:
        await send_review(gw, result.suggestion_id)


async def send_review(gw: SlackGateway, suggestion_id: str) -> None:
    """Post an Approve / Reject request to the admin channel (or each admin's DM)."""
    suggestion = await gw.client.reviews.get(suggestion_id)
    if suggestion is None:
        log.warning("suggestion %s vanished before review", suggestion_id)
        return
    blocks = bc.review_blocks(
        suggestion_id=suggestion.id,
        delta=KbDelta.model_validate(suggestion.delta),
        proposed_by=suggestion.proposed_by,
        summary=str(suggestion.context.get("summary", "")),
    )
    targets = (
        [gw.admin_channel]
        if gw.admin_channel
        else [await gw.api.dm_channel(a) for a in sorted(gw.client.admins)]
    )
    if not targets:
        log.warning("suggestion %s waits for review but no admins are configured", suggestion.id)
    for target in targets:
        await gw.api.post(target, blocks, text="Voorstel voor de kennisgraaf")


async def review_click(
    gw: SlackGateway, *, user: str, suggestion_id: str, approve: bool, blocks: Blocks, reply: Reply
) -> None:
    """Approve / Reject: authorised in core; the message then says who decided."""
    decision = await gw.client.reviews.decide(
        suggestion_id=suggestion_id, user_id=user, approve=approve
    )
    if decision.status == "forbidden":
        log.warning("non-admin %s tried to decide suggestion %s", user, suggestion_id)
        await reply.private("Alleen beheerders kunnen voorstellen beoordelen.")
        return
    if decision.status == "not_found":
        await reply.private("Dit voorstel bestaat niet (meer).")
        return
    if decision.decision is None or decision.decided_by is None:
        # A concurrent click won; whoever it was, their decision stands.
        await reply.private("Over dit voorstel is net al besloten door een andere beheerder.")
        return
    approved, by = decision.approved, decision.decided_by
    if any(b.get("block_id") == ids.BLOCK_REVIEW_ACTIONS for b in blocks):
        updated = bc.review_outcome(blocks, approved=approved, decided_by=by)
    else:  # a row of the /r42 suggestions list: its own actions block
        updated = _decided_row(blocks, suggestion_id, approved=approved, by=by)
    await reply.update(updated, "Voorstel beoordeeld")
    if decision.status == "already_decided":
        await reply.private(f"Hierover is al besloten door {mention(by)}.")


def _decided_row(blocks: Blocks, suggestion_id: str, *, approved: bool, by: str) -> Blocks:
    verdict = ":white_check_mark: Goedgekeurd" if approved else ":x: Afgewezen"
    line = context(f"{verdict} door {mention(by)}")
    out: Blocks = []
    for block in blocks:
        values = [e.get("value") for e in block.get("elements") or [] if isinstance(e, dict)]
        out.append(line if block.get("type") == "actions" and suggestion_id in values else block)
    return out
