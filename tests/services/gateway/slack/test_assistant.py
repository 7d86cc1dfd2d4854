"""Slack's assistant view: greeting and prompts, a title from the first question, a status."""

from __future__ import annotations

import json
from datetime import timedelta

from services.gateway.slack import ids
from services.gateway.slack.blocks.chat import THINKING_TEXT
from services.gateway.slack.flows.assistant import EXAMPLES, GREETING
from services.gateway.slack.flows.chat import WORKING_STATUS
from shared.bus import ChatReply, SourceRef
from shared.store import ChatTurn, Topic, utcnow
from tests.fakes.slack_server import FakeSlack
from tests.services.gateway.conftest import R42Stub
from tests.services.gateway.harness import USER, Gateway

DM = "D0USER1"
THREAD = "1726133698.626339"


def thread_started() -> dict:
    """assistant_thread_started as Slack sends it (bolt-python's own fixture shape)."""
    return {
        "type": "assistant_thread_started",
        "assistant_thread": {
            "user_id": USER,
            "context": {"channel_id": "C0PUBLIC", "team_id": "T0FAKE", "enterprise_id": None},
            "channel_id": DM,
            "thread_ts": THREAD,
        },
        "event_ts": "1726133698.665188",
    }


def thread_message(text: str, ts: str) -> dict:
    """A user's message in the assistant thread (message.im with thread_ts)."""
    return {
        "user": USER,
        "type": "message",
        "ts": ts,
        "client_msg_id": f"cm-{ts}",
        "text": text,
        "team": "T0FAKE",
        "thread_ts": THREAD,
        "parent_user_id": USER,
        "channel": DM,
        "event_ts": ts,
        "channel_type": "im",
    }


def text_of(call) -> str:
    return json.dumps(call.args.get("blocks"), ensure_ascii=False) + str(call.args.get("text", ""))


async def test_thread_started_greets_and_suggests_prompts(
    gateway: Gateway, fake_slack: FakeSlack
) -> None:
    store = gateway.ctx.store
    await store.topics.upsert_many([Topic(id="verlof", label="Verlof", type="process")])
    # Asked by two colleagues and answered: suggested; asked by one, or unanswered: never.
    for n, (user, question, topics, miss) in enumerate([
        ("U1", "Hoe declareer ik reiskosten?", ["verlof"], False),
        ("U2", "hoe declareer ik  reiskosten", ["verlof"], False),
        ("U1", "Wat is mijn privé salaris?", ["verlof"], False),
        ("U1", "Mag de hond mee?", [], True),
        ("U2", "Mag de hond mee?", [], True),
    ]):  # fmt: skip
        at = utcnow() - timedelta(minutes=10 - n)  # distinct times: "newest" is well defined
        await store.turns.put(ChatTurn(turn_id=f"t{n}", user=user, question=question, answer="…",
                                       topic_ids=topics, kb_miss=miss, created_at=at))  # fmt: skip
    status, _ = await gateway.event(thread_started(), event_id="EvA1")
    assert status == 200
    greeting = (await fake_slack.wait_for("chat.postMessage"))[0]
    assert greeting.args["thread_ts"] == THREAD and GREETING in text_of(greeting)
    prompts = (await fake_slack.wait_for("assistant.threads.setSuggestedPrompts"))[0]
    assert prompts.response == {"ok": True}  # the fake checks Slack's argument rules
    assert prompts.args["channel_id"] == DM and prompts.args["thread_ts"] == THREAD
    offered = prompts.args["prompts"]
    assert offered[0]["title"] == "Onderwerp van de week: Verlof"
    assert [p["message"] for p in offered[1:]] == [
        "hoe declareer ik reiskosten",  # the newest wording of the frequent question
        *[p["message"] for p in EXAMPLES],
    ]
    assert all(p["message"] and len(p["title"]) <= 75 for p in offered) and len(offered) <= 4


async def test_a_question_gets_title_status_and_an_answer_in_its_own_memory(
    gateway: Gateway, r42_stub: R42Stub, fake_slack: FakeSlack
) -> None:
    async def reply(req):
        return ChatReply(text="Via het HR-portaal.", sources=[SourceRef(id="v", label="Verlof")])

    r42_stub.reply = reply
    await gateway.event(thread_message("Hoe vraag ik   verlof aan?", "1726133700.1"), event_id="E1")
    answer = (await fake_slack.wait_for("chat.postMessage"))[0]
    assert answer.args["thread_ts"] == THREAD and "HR-portaal" in text_of(answer)
    assert ids.BLOCK_FEEDBACK in text_of(answer) and THINKING_TEXT not in text_of(answer)
    title = (await fake_slack.wait_for("assistant.threads.setTitle"))[0]
    assert title.args["title"] == "Hoe vraag ik verlof aan?" and title.response["ok"]
    status = (await fake_slack.wait_for("assistant.threads.setStatus"))[0]
    assert status.args["status"] == WORKING_STATUS and status.response["ok"]
    assert status.at < answer.at  # the status came while R42 worked, before the answer
    assert r42_stub.chats[0].conversation == f"slack:{DM}:{THREAD}"

    await gateway.event(thread_message("En ziekteverlof?", "1726133700.2"), event_id="E2")
    await fake_slack.wait_for("chat.postMessage", 2)
    await gateway.settle()
    assert len(fake_slack.calls_to("assistant.threads.setTitle")) == 1  # the first question
    assert len(fake_slack.calls_to("assistant.threads.setStatus")) == 2
    assert r42_stub.chats[1].conversation == f"slack:{DM}:{THREAD}"


async def test_a_plain_dm_outside_the_assistant_keeps_working(
    gateway: Gateway, r42_stub: R42Stub, fake_slack: FakeSlack
) -> None:
    event = {**thread_message("Hallo", "1726133800.1"), "client_msg_id": "cm-plain"}
    del event["thread_ts"], event["parent_user_id"]
    await gateway.event(event, event_id="E3")
    await fake_slack.wait_for("chat.update")
    await gateway.settle()
    assert THINKING_TEXT in text_of(fake_slack.calls_to("chat.postMessage")[0])
    assert not fake_slack.calls_to("assistant.threads.setStatus")
    assert r42_stub.chats[0].conversation == f"slack:{DM}"


async def test_a_redelivered_thread_question_is_answered_once(
    gateway: Gateway, r42_stub: R42Stub, fake_slack: FakeSlack
) -> None:
    message = thread_message("Hoe declareer ik?", "1726133900.1")
    await gateway.event(message, event_id="E4")
    await gateway.event(message, event_id="E4", retry_num=1)
    await fake_slack.wait_for("chat.postMessage")
    await gateway.settle()
    assert len(r42_stub.chats) == 1 and len(fake_slack.calls_to("chat.postMessage")) == 1
