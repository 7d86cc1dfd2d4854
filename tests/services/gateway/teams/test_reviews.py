"""Proposals and admin reviews as cards: decisions authorised on the server, proposer told."""

from __future__ import annotations

from services.gateway.teams import flows_review
from shared.bus import (
    ChatReply,
    ChatRequest,
    KbDelta,
    KbDeltaApplied,
    KbDeltaDecided,
    Proposal,
    ProposalDecisionReply,
    ProposalDecisionRequest,
    publish_event,
)
from shared.store import Suggestion
from tests.services.gateway.conftest import R42Stub
from tests.services.gateway.harness import make_tap
from tests.services.gateway.teams.activities import (
    ADMIN_AAD,
    USER_AAD,
    card_action,
    personal_conversation,
    personal_message,
)
from tests.services.gateway.teams.conftest import Teams
from tests.services.gateway.teams.test_quiz import execute_actions

DELTA = {"reason": "Buddy hoort bij onboarding", "topics": [], "relations": []}


async def open_chats(teams: Teams) -> None:
    """The admin and the user each wrote to the bot once (their chats are known)."""
    url = teams.connector.url
    await teams.post(personal_message(url, "help", aad=ADMIN_AAD, name="Bea Beheer"))
    await teams.post(personal_message(url, "help"))
    await teams.settle()


async def test_a_non_admin_cannot_decide_and_an_admin_can(teams: Teams, r42: R42Stub) -> None:
    await open_chats(teams)
    tap = await make_tap(teams)  # type: ignore[arg-type]
    await teams.ctx.store.suggestions.create(
        Suggestion(id="sug-1", delta=DELTA, proposed_by=USER_AAD, context={"summary": "Buddy"})
    )
    url = teams.connector.url
    data = {"s": "sug-1", "ok": True}
    # The user claims admin rights in the click: the server decides from its own list.
    forged = card_action(url, "review", {**data, "admin": True, "isAdmin": True}, reply_to_id="1:7")
    status, body = await teams.post(forged)
    assert status == 200 and "Alleen beheerders" in str(body["value"])
    assert tap.of(KbDeltaDecided) == []

    await flows_review.send_review(teams.gw, "sug-1")  # the card in the admin's chat
    posted = await teams.connector.wait_for(
        lambda c: (
            c.conversation_id == personal_conversation(ADMIN_AAD) and "Goedkeuren" in c.card_text
        ),
        what="the review card",
    )
    card_id = posted.activity_id
    click = card_action(url, "review", data, reply_to_id=card_id, aad=ADMIN_AAD, name="Bea Beheer")
    status, body = await teams.post(click)
    assert status == 200 and body["type"] == "application/vnd.microsoft.card.adaptive"
    # Nothing is claimed as done before the KG owner applied it.
    shown = str(body["value"])
    assert "wordt verwerkt" in shown and "oedgekeurd" not in shown
    [decided] = await tap.wait(KbDeltaDecided)
    assert decided.decided_by == ADMIN_AAD and decided.decision == "approved"
    assert not [c for c in teams.connector.calls if c.method == "PUT"]
    await publish_event(  # the KG owner's report, as the extractor publishes it
        teams.ctx.broker,
        KbDeltaApplied.caused_by(decided, actor="extractor", suggestion_id="sug-1",
                                 decision="approved", decided_by=ADMIN_AAD, proposed_by=USER_AAD,
                                 outcome="applied", topics=1),
        namespace=teams.namespace,
    )  # fmt: skip
    card = await teams.connector.wait_for(
        lambda c: c.method == "PUT" and c.activity_id == card_id, what="the clicked card updated"
    )
    assert f"Goedgekeurd door {ADMIN_AAD}" in card.card_text and "1 onderwerp" in card.card_text
    told = await teams.connector.wait_for(
        lambda c: (
            c.conversation_id == personal_conversation(USER_AAD) and "goedgekeurd" in c.card_text
        ),
        what="the proposer's notice",
    )
    assert "Buddy" in told.card_text and "toegevoegd" in told.card_text


async def test_a_proposal_chip_sends_a_review_card_to_the_admins(
    teams: Teams, r42: R42Stub
) -> None:
    await open_chats(teams)
    await teams.ctx.store.suggestions.create(
        Suggestion(id="sug-2", delta=DELTA, proposed_by=USER_AAD, context={"summary": "Buddy"})
    )

    async def reply(req: ChatRequest) -> ChatReply:
        return ChatReply(
            text="De buddy hoort bij onboarding.",
            proposal=Proposal(id="prop-1", delta=KbDelta.model_validate(DELTA), summary="Buddy"),
        )

    async def decide(req: ProposalDecisionRequest) -> ProposalDecisionReply:
        return ProposalDecisionReply(status="pending_review", suggestion_id="sug-2")

    r42.reply, r42.decide = reply, decide
    url = teams.connector.url
    await teams.post(personal_message(url, "Hoort de buddy bij onboarding?"))
    await teams.settle()
    answer = await teams.connector.wait_for(lambda c: "Voorstel" in c.card_text, what="the chip")
    [yes, _no] = [a for a in execute_actions(answer) if a["verb"] == "proposal"]
    status, body = await teams.post(
        card_action(url, "proposal", yes["data"], reply_to_id=answer.activity_id)
    )
    assert status == 200 and "beheerders" in str(body["value"])
    assert [d.user_id for d in r42.decisions] == [USER_AAD]  # no admin claim: the contract has none
    await teams.settle()
    review = await teams.connector.wait_for(
        lambda c: (
            c.conversation_id == personal_conversation(ADMIN_AAD) and "Goedkeuren" in c.card_text
        ),
        what="the admin's review card",
    )
    assert [a["data"] for a in execute_actions(review)] == [
        {"s": "sug-2", "ok": True},
        {"s": "sug-2", "ok": False},
    ]
