"""Chat turns, typed commands, feedback, proposals and admin reviews in Teams.

Everything here runs after the HTTP answer (messages) or is fast enough to answer an
invoke inline (one store read or bus publish). Admin status comes from the server-side
admin list through the client, never from the activity.
"""

from __future__ import annotations

import logging
from typing import Any

from microsoft_agents.activity import ConversationReference

from services.gateway.core.text import SOURCE_STATUS_NL, dutch
from services.gateway.teams import cards, flows_review, views
from services.gateway.teams.core import user_message
from services.gateway.teams.surface import TeamsGateway, conversation_key

log = logging.getLogger(__name__)

EMPTY_HINT = (
    "Stel me gerust een vraag, bijvoorbeeld: *Hoe declareer ik reiskosten?* "
    "Typ **help** voor alles wat ik kan."
)
QUIZ_ACTIVE = "Je bent bezig met de quiz; ik antwoord weer als je klaar bent."


async def chat_turn(
    gw: TeamsGateway,
    *,
    ref: ConversationReference,
    user: str,
    name: str,
    text: str,
    correlation: str,
    reply_to: str | None,
) -> None:
    """Typing indicator, then R42's answer card (sources, proposal chip, feedback)."""
    if not text:
        await gw.notify(ref, EMPTY_HINT, reply_to=reply_to)
        return
    if await gw.client.chat.quiz_active(user):
        await gw.notify(ref, QUIZ_ACTIVE, reply_to=reply_to)
        return
    await gw.sender.typing(ref)
    try:
        reply = await gw.client.chat.ask(
            user_id=user,
            text=text,
            conversation=conversation_key(ref.conversation.id),
            user_name=name,
            correlation_id=correlation,
            turn_id=correlation,  # the activity id: a redelivered activity is answered once
        )
    except Exception as exc:
        await gw.notify(ref, user_message(exc), warning=True, reply_to=reply_to)
        return
    if reply.refused:
        await gw.notify(ref, reply.text or "…", reply_to=reply_to)
        return
    await gw.post(
        ref,
        views.answer_card(reply, turn_id=correlation),
        summary=reply.text[:200],
        reply_to=reply_to,
    )


async def feedback(gw: TeamsGateway, *, user: str, data: dict[str, Any]) -> dict[str, Any]:
    """👍 / 👎 on an answer: stored, thanked (the card stays)."""
    turn, up = data.get("t"), data.get("up")
    if not isinstance(turn, str) or not isinstance(up, bool):
        return cards.invoke_message("Deze knop is ongeldig.")
    try:
        await gw.client.feedback.vote(user_id=user, turn_id=turn, positive=up, where="teams")
    except Exception as exc:
        return cards.invoke_message(user_message(exc))
    return cards.invoke_message("Bedankt voor je feedback!")


async def proposal(
    gw: TeamsGateway, *, user: str, data: dict[str, Any], answer_text: str
) -> dict[str, Any]:
    """Yes / No on a proposal chip; a non-admin Yes goes to the admins for review."""
    proposal_id, accept = data.get("p"), data.get("ok")
    if not isinstance(proposal_id, str) or not isinstance(accept, bool):
        return cards.invoke_message("Deze knop is ongeldig.")
    try:
        result = await gw.client.chat.decide_proposal(
            proposal_id=proposal_id, user_id=user, accept=accept
        )
    except Exception as exc:
        return cards.invoke_message(user_message(exc))
    if result.status in ("not_found", "already_decided"):
        return cards.invoke_message(views.PROPOSAL_OUTCOMES[result.status])
    if result.status == "pending_review" and result.suggestion_id:
        gw.background.spawn(flows_review.send_review(gw, result.suggestion_id), name="teams-review")
    return cards.invoke_card(views.proposal_outcome_card(answer_text, result.status))


async def admin_command(
    gw: TeamsGateway, *, ref: ConversationReference, user: str, command: str, arg: str
) -> None:
    """sources, suggestions, diagnostics, graph: admins only (checked by the client)."""
    try:
        if command == "sources":
            gw.client.require_admin(user, "bronnen bekijken")
            rows = await gw.client.sources.list(limit=15)
            lines = [f"- **{s.name}** — {dutch(s.status, SOURCE_STATUS_NL)}" for s in rows] or [
                "Nog geen bronnen."
            ]
            await gw.post(ref, cards.card([cards.heading("Bronnen"), cards.text("\n".join(lines))]))
        elif command == "suggestions":
            pending = await gw.client.reviews.pending(user_id=user)
            await gw.post(ref, views.suggestions_card(pending), summary="Voorstellen")
        elif command == "diagnostics":
            d = await gw.client.reads.diagnostics(user_id=user)
            pairs = [
                ("Aanroepen deze week", str(d.week_calls)),
                ("Fouten deze week", str(d.week_errors)),
                ("Kosten deze week", f"$ {d.week_cost_usd:.2f}"),
                ("Aanroepen totaal", str(d.total_calls)),
            ]
            await gw.post(ref, cards.card([cards.heading("Diagnostiek"), cards.facts(pairs)]))
        elif command == "graph":
            view = await gw.client.reads.graph(arg)
            lines = [
                f"- {rel} {'→' if out else '←'} {t.label}" for rel, out, t in view.neighbours[:40]
            ]
            body = [cards.heading(view.topic.label), cards.text(view.topic.description or " ")]
            body.append(cards.text("\n".join(lines) or "Geen relaties."))
            await gw.post(ref, cards.card(body))
    except Exception as exc:
        await gw.notify(ref, user_message(exc), warning=True)
