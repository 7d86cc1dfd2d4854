"""Knowledge-graph proposals in Slack: the Yes / No chip, admin reviews, Approve / Reject."""

from __future__ import annotations

import logging
import re
from datetime import UTC, datetime

from services.gateway.core import user_message
from services.gateway.core.reviews import OUTCOME_TIMEOUT_S
from services.gateway.slack.api import Blocks
from services.gateway.slack.blocks import chat as bc
from services.gateway.slack.blocks import reviews as br
from services.gateway.slack.blocks.kit import escape, mention, truncate
from services.gateway.slack.gateway import Reply, SlackGateway
from shared.bus import KbDelta, KbDeltaApplied

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
    blocks = br.review_blocks(
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
        await gw.api.post(target, blocks, text=br.REVIEW_TITLE)


async def suggestions_list(gw: SlackGateway, *, user: str) -> tuple[Blocks, str]:
    """/r42 suggestions: the pending list (admins only; ForbiddenError otherwise)."""
    pending = await gw.client.reviews.pending(user_id=user)
    return br.suggestions_blocks(pending), "Openstaande voorstellen"


async def review_click(
    gw: SlackGateway, *, user: str, value: str, approve: bool, blocks: Blocks, reply: Reply
) -> None:
    """Approve / Reject: authorised in core; the message says what the KG owner reported.

    A card in the admin channel has its buttons replaced; a row of the ephemeral
    /r42 suggestions list (Slack sends no `message` for it) is re-rendered from the ids
    in its value, this row marked and the others as they are now.
    """
    suggestion_id, listed = br.parse_value(value)
    if not suggestion_id:
        await reply.private("Dit voorstel bestaat niet (meer).")
        return
    reviews = gw.client.reviews

    async def show(line: str) -> None:
        if listed is None:
            await reply.update(br.card_outcome(blocks, line), "Voorstel beoordeeld")
        else:
            rows = await reviews.listed(listed)
            lines = {suggestion_id: line}
            await reply.update(br.suggestions_blocks(rows, lines=lines), "Voorstellen")

    async with reviews.outcome(suggestion_id) as outcome:
        decision = await reviews.decide(
            suggestion_id=suggestion_id, user_id=user, approve=approve, surface="slack"
        )
        if decision.status == "forbidden":
            await reply.private("Alleen beheerders kunnen voorstellen beoordelen.")
            return
        if decision.status == "not_found":
            await reply.private("Dit voorstel bestaat niet (meer).")
            return
        if decision.status == "already_decided":
            current = await reviews.get(suggestion_id)
            if current is not None and current.status != "pending":
                await show(br.stored_line(current))
            who = mention(decision.decided_by) if decision.decided_by else "een andere beheerder"
            await reply.private(f"Over dit voorstel is al besloten door {who}.")
            return
        at = datetime.now(UTC)
        await show(br.working_line(approve=approve, by=user, at=at))
        report = await outcome(OUTCOME_TIMEOUT_S)
    if report is None:
        await show(br.queued_line(approve=approve, by=user, at=at))
    else:
        await show(br.outcome_line(report, at=at))


def is_slack_user(user_id: str) -> bool:
    """Whether an id is a Slack user (proposals from other surfaces are told there)."""
    return re.fullmatch(r"[UW][A-Z0-9]{2,}", user_id) is not None


async def on_delta_applied(gw: SlackGateway, event: KbDeltaApplied) -> None:
    """The KG owner reported a decision: tell the proposer in a DM (once, durable consumer)."""
    proposer = event.proposed_by
    if not proposer:
        suggestion = await gw.client.reviews.get(event.suggestion_id)
        proposer = suggestion.proposed_by if suggestion else ""
    if not is_slack_user(proposer) or proposer == event.decided_by:
        return
    suggestion = await gw.client.reviews.get(event.suggestion_id)
    reason = ""
    if suggestion is not None:
        reason = str(suggestion.delta.get("reason") or "")
    about = f" „{escape(truncate(reason, 300))}”" if reason else ""
    line = br.outcome_line(event, at=event.occurred_at)
    text = f"Je voorstel{about} voor de kennisgraaf:\n{line}"
    await gw.notify(await gw.api.dm_channel(proposer), text)
