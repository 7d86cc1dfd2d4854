"""An @mention inside a channel thread brings the thread's earlier messages; nothing else does."""

from __future__ import annotations

from shared.bus.chat import MAX_THREAD_NOTE_CHARS, MAX_THREAD_NOTES
from tests.fakes.slack_server import FakeSlack
from tests.services.gateway.conftest import R42Stub
from tests.services.gateway.harness import USER, Gateway

CHANNEL = "C0PUBLIC"
PARENT = "1700000000.000100"
COLLEAGUE = "U0COLLEGA"


def _message(n: int, text: str, **extra: object) -> dict:
    return {"type": "message", "user": COLLEAGUE, "text": text, "thread_ts": PARENT,
            "ts": f"1700000000.{n:06d}", **extra}  # fmt: skip


def _mention(ts: str, *, thread_ts: str | None = PARENT) -> dict:
    event = {"type": "app_mention", "channel": CHANNEL, "user": USER,
             "text": "<@UBOT> Hoeveel dagen zijn dat?", "ts": ts}  # fmt: skip
    return {**event, "thread_ts": thread_ts} if thread_ts else event


async def test_a_mention_in_a_thread_sends_its_opening_and_latest_messages(
    gateway: Gateway, r42_stub: R42Stub, fake_slack: FakeSlack
) -> None:
    thread = [_message(100, "Onze nieuwe collega krijgt een kind: hoe zit ouderschapsverlof?")]
    thread += [_message(200 + i, f"bericht {i}") for i in range(12)]
    thread += [_message(300, "<@UBOT> heeft hier eerder op geantwoord", bot_id="B0R42")]
    thread += [_message(400, "x " * 2000)]  # far too long: cut
    thread += [_message(900, "na de vraag")]  # after the mention: not context
    fake_slack.threads[(CHANNEL, PARENT)] = thread
    await gateway.event(_mention("1700000000.000500"), event_id="EvT1")
    await fake_slack.wait_for("chat.update")
    await gateway.settle()
    (request,) = r42_stub.chats
    notes = request.thread
    assert len(notes) == MAX_THREAD_NOTES
    assert notes[0].text.startswith("Onze nieuwe collega") and notes[0].author == "User U0COLLEGA"
    assert [n.text for n in notes[1:-2]] == [f"bericht {i}" for i in range(5, 12)]
    assert notes[-2].author == "een bot" and "<@" not in notes[-2].text
    assert len(notes[-1].text) <= MAX_THREAD_NOTE_CHARS and notes[-1].text.endswith("…")
    assert all("na de vraag" not in n.text for n in notes)
    (replies,) = fake_slack.calls_to("conversations.replies")
    assert replies.args["channel"] == CHANNEL and replies.args["ts"] == PARENT
    assert replies.args["latest"] == "1700000000.000500"


async def test_a_thread_slack_will_not_show_still_gets_an_answer(
    gateway: Gateway, r42_stub: R42Stub, fake_slack: FakeSlack
) -> None:
    await gateway.event(_mention("1700000000.000600"), event_id="EvT2")  # no such thread
    await fake_slack.wait_for("chat.update")
    await gateway.settle()
    (request,) = r42_stub.chats
    assert request.thread == []
    assert fake_slack.calls_to("conversations.replies")[0].response["error"] == "thread_not_found"


async def test_a_mention_that_starts_a_thread_reads_nothing(
    gateway: Gateway, r42_stub: R42Stub, fake_slack: FakeSlack
) -> None:
    await gateway.event(_mention("1700000000.000700", thread_ts=None), event_id="EvT3")
    await fake_slack.wait_for("chat.update")
    await gateway.settle()
    assert r42_stub.chats[0].thread == []
    assert fake_slack.calls_to("conversations.replies") == []
