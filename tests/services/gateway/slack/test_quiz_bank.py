"""'Quizbank opnieuw maken' on the topic card: signed clicks (ephemeral, without `message`), the
real quiz service on the bus, admin status decided on the server side, every attempt audited."""

from __future__ import annotations

import json

import pytest

from services.gateway.slack import ids
from services.gateway.slack.blocks import topics as bt
from services.quiz import app as quiz_app
from shared.bus import request
from shared.bus.quiz_rpc import QUIZ_BANK_SUBJECT, BankRegenerateReply, BankRegenerateRequest
from shared.bus.topic_rpc import TopicCard
from shared.config import Settings
from shared.runtime.service import Rpc, start_service
from shared.store import QuizQuestion, Topic
from tests.fakes.slack_server import FakeSlack, SlackCall
from tests.services.gateway.harness import ADMIN, USER, Gateway, start_stub

CHANNEL = "C0PUBLIC"


def shown(call: SlackCall) -> str:
    return json.dumps(call.args.get("blocks"), ensure_ascii=False) + str(call.args.get("text"))


@pytest.fixture
async def with_topic(gateway: Gateway) -> Gateway:
    """A topic with a three-question bank."""
    store = gateway.ctx.store
    await store.topics.upsert_many([Topic(
        id="verlof", label="Verlof", type="process",
        description="Verlof vraag je twee weken vooraf aan in het HR-portaal. Je teamlead keurt "
                    "het goed. Bijzonder verlof heeft een eigen regeling.",
    )])  # fmt: skip
    await store.quiz_banks.add_questions("verlof", [
        QuizQuestion(text=f"Oude vraag {i}?", options=["a", "b", "c", "d"], correct_index=0,
                     explanation="Omdat.", difficulty="easy")
        for i in range(3)
    ])  # fmt: skip
    return gateway


@pytest.fixture
async def quiz_service(with_topic: Gateway, settings: Settings) -> Gateway:
    """The real quiz service (offline model) on the gateway's bus and store."""
    ctx = await start_service("quiz", build=quiz_app.build, settings=settings,
                              namespace=with_topic.namespace)  # fmt: skip
    with_topic.others.append(ctx)
    return with_topic


def test_the_card_offers_it_to_admins_only() -> None:
    card = TopicCard(topic=Topic(id="verlof", label="Verlof", type="process"))
    assert ids.QUIZ_BANK in json.dumps(bt.card_blocks(card, admin=True))
    assert ids.QUIZ_BANK not in json.dumps(bt.card_blocks(card, admin=False))


async def test_an_admin_regenerates_the_bank_from_an_ephemeral_card(
    quiz_service: Gateway, fake_slack: FakeSlack
) -> None:
    gw = quiz_service
    await gw.action(ids.QUIZ_BANK, "verlof", user=ADMIN, channel=CHANNEL, ephemeral=True)
    said = await fake_slack.wait_for("chat.postEphemeral", 2, timeout=30)
    await gw.settle()
    working, done = said[0], said[1]
    assert "wordt opnieuw gemaakt" in shown(working) and working.args["user"] == ADMIN
    assert "Nieuwe quizbank voor `verlof`" in shown(done) and "3 oude verwijderd" in shown(done)
    bank = await gw.ctx.store.quiz_banks.get("verlof")
    assert bank is not None and bank.questions
    assert not any(q.text.startswith("Oude vraag") for q in bank.questions)
    (entry,) = [e for e in await gw.ctx.store.audit.latest() if e.action == "quiz.bank_regenerate"]
    assert (entry.actor, entry.allowed, entry.surface) == (ADMIN, True, "slack")


async def test_a_non_admin_click_is_refused_and_audited(
    quiz_service: Gateway, fake_slack: FakeSlack
) -> None:
    gw = quiz_service
    await gw.action(ids.QUIZ_BANK, "verlof", user=USER, channel=CHANNEL, ephemeral=True)
    (refused,) = await fake_slack.wait_for("chat.postEphemeral")
    await gw.settle()
    assert "Alleen beheerders" in shown(refused) and ids.QUIZ_BANK not in shown(refused)
    bank = await gw.ctx.store.quiz_banks.get("verlof")
    assert bank is not None and len(bank.questions) == 3  # untouched
    (entry,) = await gw.ctx.store.audit.latest()
    assert (entry.actor, entry.action, entry.allowed) == (USER, "quiz.bank_regenerate", False)


async def test_the_quiz_service_refuses_a_caller_who_says_it_is_an_admin(
    quiz_service: Gateway,
) -> None:
    # Straight onto the bus, past the gateway: the quiz service checks its own admin list.
    reply = await request(
        quiz_service.ctx.broker, QUIZ_BANK_SUBJECT,
        BankRegenerateRequest(user_id=USER, topic_id="verlof"),
        response_model=BankRegenerateReply, timeout=15, namespace=quiz_service.namespace,
    )  # fmt: skip
    assert reply.status == "forbidden"
    bank = await quiz_service.ctx.store.quiz_banks.get("verlof")
    assert bank is not None and len(bank.questions) == 3


async def test_a_gate_refusal_shows_the_reason_and_a_retry(
    with_topic: Gateway, fake_slack: FakeSlack, settings: Settings
) -> None:
    asked: list[BankRegenerateRequest] = []

    async def refuse(req: BankRegenerateRequest) -> BankRegenerateReply:
        asked.append(req)
        return BankRegenerateReply(status="rejected", size=3, reason="2 of 10 had no explanation")

    rpc = [Rpc(QUIZ_BANK_SUBJECT, BankRegenerateRequest, refuse)]
    stub = await start_stub("quiz", settings, namespace=with_topic.namespace, rpc=rpc)
    with_topic.others.append(stub)
    await with_topic.action(ids.QUIZ_BANK, "verlof", user=ADMIN, channel=CHANNEL, ephemeral=True)
    said = await fake_slack.wait_for("chat.postEphemeral", 2)
    await with_topic.settle()
    outcome = said[1]
    assert "kwaliteitscontrole" in shown(outcome) and "no explanation" in shown(outcome)
    [retry] = [e for b in outcome.args["blocks"] if b["type"] == "actions" for e in b["elements"]]
    assert (retry["action_id"], retry["value"]) == (ids.QUIZ_BANK, "verlof")
    await with_topic.action(retry["action_id"], retry["value"], user=ADMIN, channel=CHANNEL,
                            ephemeral=True)  # fmt: skip
    await fake_slack.wait_for("chat.postEphemeral", 4)
    await with_topic.settle()
    assert [r.user_id for r in asked] == [ADMIN, ADMIN]
