"""Admin reviews in Teams: the Approve / Reject card, the decision and what the KG owner did.

A click is authorised on the server against the admin list (never from the card's data). The
card answers "wordt verwerkt…" at once and says "goedgekeurd" only when the KG owner reported
kb.delta.applied (or why it failed); without a report in time it says the decision is queued.
The proposer hears the outcome the same way.
"""

from __future__ import annotations

import asyncio
import logging
from datetime import UTC, datetime
from typing import Any

from microsoft_agents.activity import ConversationReference

from services.gateway.core.reviews import OUTCOME_TIMEOUT_S
from services.gateway.teams import cards, views
from services.gateway.teams.surface import TeamsGateway
from shared.bus import KbDelta, KbDeltaApplied

log = logging.getLogger(__name__)

Invoke = dict[str, Any]


async def send_review(gw: TeamsGateway, suggestion_id: str) -> None:
    """An Approve / Reject card in every admin's personal chat with the bot."""
    suggestion = await gw.client.reviews.get(suggestion_id)
    if suggestion is None:
        log.warning("suggestion %s vanished before review", suggestion_id)
        return
    card = views.review_card(
        suggestion_id=suggestion.id,
        delta=KbDelta.model_validate(suggestion.delta),
        proposed_by=suggestion.proposed_by,
        summary=str(suggestion.context.get("summary", "")),
    )
    sent = 0
    for admin in sorted(gw.client.admins):
        ref = await gw.refs.personal(admin)
        if ref is None:
            continue  # an admin who never opened a chat with the bot (Slack admins too)
        await gw.post(ref, card, summary="Voorstel voor de kennisgraaf")
        sent += 1
    if not sent:
        log.warning(
            "suggestion %s waits for review; no admin has a Teams chat with the bot", suggestion.id
        )


async def review(
    gw: TeamsGateway,
    *,
    user: str,
    data: dict[str, Any],
    ref: ConversationReference | None = None,
    card_activity: str | None = None,
) -> Invoke:
    """Approve / Reject: the invoke's answer now; the clicked card follows the KG owner's report."""
    suggestion_id, approve = data.get("s"), data.get("ok")
    if not isinstance(suggestion_id, str) or not isinstance(approve, bool):
        return cards.invoke_message("Deze knop is ongeldig.")
    answered: asyncio.Future[Invoke] = asyncio.get_running_loop().create_future()
    gw.background.spawn(
        _decide(gw, user=user, suggestion_id=suggestion_id, approve=approve, answered=answered,
                ref=ref, card_activity=card_activity),
        name="teams-review-decision",
    )  # fmt: skip
    return await answered


async def _decide(
    gw: TeamsGateway,
    *,
    user: str,
    suggestion_id: str,
    approve: bool,
    answered: asyncio.Future[Invoke],
    ref: ConversationReference | None,
    card_activity: str | None,
) -> None:
    """Decide inside the watch for the outcome (opened first: a fast report is not missed)."""
    reviews = gw.client.reviews
    try:
        async with reviews.outcome(suggestion_id) as outcome:
            decision = await reviews.decide(
                suggestion_id=suggestion_id, user_id=user, approve=approve, surface="teams"
            )
            if decision.status == "forbidden":
                log.warning("non-admin %s tried to decide suggestion %s", user, suggestion_id)
                answered.set_result(
                    cards.invoke_message("Alleen beheerders kunnen voorstellen beoordelen.")
                )
                return
            if decision.status == "not_found":
                answered.set_result(cards.invoke_message("Dit voorstel bestaat niet (meer)."))
                return
            if decision.status != "decided" or decision.suggestion is None:
                answered.set_result(cards.invoke_message(
                    "Over dit voorstel is net al besloten door een andere beheerder."
                ))  # fmt: skip
                return
            summary = str(decision.suggestion.context.get("summary", ""))
            at = datetime.now(UTC)
            answered.set_result(cards.invoke_card(
                views.review_working_card(approve=approve, decided_by=user, at=at, summary=summary)
            ))  # fmt: skip
            report = await outcome(OUTCOME_TIMEOUT_S)
    except Exception as exc:
        if not answered.done():
            answered.set_exception(exc)
            return
        raise
    finally:  # cancelled while deciding (shutdown): the click still gets an answer
        if not answered.done():
            answered.set_result(cards.invoke_message("Dat lukte nu niet; probeer het opnieuw."))
    card = (
        views.review_queued_card(approve=approve, decided_by=user, at=at, summary=summary)
        if report is None
        else views.review_report_card(report, at=at, summary=summary)
    )
    if ref is not None and card_activity:
        await gw.replace(ref, card_activity, card, summary="Voorstel voor de kennisgraaf")
    await tell_proposer(gw, proposer=decision.suggestion.proposed_by, report=report,
                        summary=summary)  # fmt: skip


async def tell_proposer(
    gw: TeamsGateway, *, proposer: str, report: KbDeltaApplied | None, summary: str
) -> None:
    """The proposer's personal chat gets what the KG owner did (or that it is queued)."""
    if report is not None and proposer == report.decided_by:
        return
    ref = await gw.refs.personal(proposer)
    if ref is None:
        return
    about = summary or "wijziging in de kennisgraaf"
    await gw.notify(ref, f"Je voorstel ({about}): {views.report_line(report)}")
