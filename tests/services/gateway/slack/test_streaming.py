"""Answers streamed into Slack threads: chat.startStream / appendStream / stopStream."""

from __future__ import annotations

import asyncio
import json

from services.gateway.slack import ids
from services.gateway.slack.blocks.chat import THINKING_TEXT
from shared.bus import ChatReply, ChatRequest, SourceRef, chunk_sink
from tests.fakes.slack_server import FakeSlack
from tests.services.gateway.conftest import R42Stub
from tests.services.gateway.harness import USER, Gateway

MENTION = {
    "type": "app_mention",
    "channel": "C0PUBLIC",
    "user": USER,
    "text": "<@UBOT> Hoe vraag ik verlof aan?",
    "ts": "1700000000.000700",
}


def streaming_reply(pieces: list[str], final: ChatReply, pause: float = 0.05):
    """A stub r42 answer that streams `pieces` (as the service does) and then replies."""

    async def reply(req: ChatRequest) -> ChatReply:
        sink = chunk_sink()
        assert sink is not None, "the gateway asked without streaming"
        for piece in pieces:
            await sink(piece)
            await asyncio.sleep(pause)
        return final

    return reply


async def test_a_mention_is_streamed_with_sources_and_feedback_at_the_end(
    gateway: Gateway, r42_stub: R42Stub, fake_slack: FakeSlack
) -> None:
    text = "Verlof vraag je aan in het **HR-portaal**, minstens <twee> weken vooraf."
    pieces = [
        "Verlof ",
        "vraag je aan ",
        "in het **HR-portaal**, ",
        "minstens <twee> ",
        "weken vooraf.",
    ]
    final = ChatReply(text=text, sources=[SourceRef(id="verlof", label="Verlof")])
    r42_stub.reply = streaming_reply(pieces, final)
    await gateway.event(MENTION, event_id="EvS1")
    stop = (await fake_slack.wait_for("chat.stopStream"))[0]
    await gateway.settle()
    start = fake_slack.calls_to("chat.startStream")[0]
    assert start.args["thread_ts"] == MENTION["ts"] and start.args["channel"] == "C0PUBLIC"
    assert (start.args["recipient_user_id"], start.args["recipient_team_id"]) == (USER, "T0FAKE")
    streamed = fake_slack.streams[stop.args["ts"]]
    # What the user read is the answer, Slack's control characters escaped.
    assert streamed.text == text.replace("<", "&lt;").replace(">", "&gt;")
    assert streamed.stopped and len(fake_slack.calls_to("chat.appendStream")) >= 1
    tail = json.dumps(streamed.blocks, ensure_ascii=False)
    assert "Bronnen: Verlof" in tail
    assert any(b.get("block_id") == ids.BLOCK_FEEDBACK for b in streamed.blocks)
    # The working indicator was posted first and removed once text streamed in its place.
    (posted,) = fake_slack.calls_to("chat.postMessage")
    assert THINKING_TEXT in json.dumps(posted.args.get("blocks"), ensure_ascii=False)
    (deleted,) = fake_slack.calls_to("chat.delete")
    assert deleted.args["ts"] == posted.response["ts"]
    assert not fake_slack.calls_to("chat.update")
    assert start.at < fake_slack.calls_to("chat.appendStream")[0].at < stop.at


async def test_a_reply_that_does_not_continue_the_stream_replaces_it(
    gateway: Gateway, r42_stub: R42Stub, fake_slack: FakeSlack
) -> None:
    final = ChatReply(text="Sorry, dat ging mis (r42-abc12345).", error_ref="r42-abc12345")
    r42_stub.reply = streaming_reply(["Verlof vraag ", "je aan"], final)
    await gateway.event(MENTION, event_id="EvS2")
    update = (await fake_slack.wait_for("chat.update"))[0]
    await gateway.settle()
    (stop,) = fake_slack.calls_to("chat.stopStream")
    assert update.args["ts"] == stop.args["ts"]  # the streamed message now says what happened
    shown = json.dumps(update.args["blocks"], ensure_ascii=False)
    assert "Sorry, dat ging mis" in shown and "r42-abc12345" in shown
    assert ids.BLOCK_FEEDBACK not in shown


async def test_when_slack_refuses_the_stream_the_answer_is_posted(
    gateway: Gateway, r42_stub: R42Stub, fake_slack: FakeSlack
) -> None:
    fake_slack.overrides["chat.startStream"] = {"ok": False, "error": "not_allowed_token_type"}
    final = ChatReply(text="Verlof vraag je aan.", sources=[SourceRef(id="verlof", label="Verlof")])
    r42_stub.reply = streaming_reply(["Verlof ", "vraag je aan."], final)
    await gateway.event(MENTION, event_id="EvS3")
    update = (await fake_slack.wait_for("chat.update"))[0]
    await gateway.settle()
    (posted,) = fake_slack.calls_to("chat.postMessage")
    assert update.args["ts"] == posted.response["ts"]  # the indicator became the answer
    assert "Bronnen: Verlof" in json.dumps(update.args["blocks"], ensure_ascii=False)
    assert not fake_slack.calls_to("chat.appendStream") and not fake_slack.calls_to("chat.delete")


async def test_a_top_level_dm_streams_under_the_question_and_keeps_the_dm_memory(
    gateway: Gateway, r42_stub: R42Stub, fake_slack: FakeSlack
) -> None:
    final = ChatReply(text="Verlof vraag je aan.", sources=[SourceRef(id="verlof", label="Verlof")])
    r42_stub.reply = streaming_reply(["Verlof ", "vraag je aan."], final)
    dm = {"type": "message", "channel_type": "im", "channel": "DUSER1", "user": USER,
          "text": "Hoe vraag ik verlof aan?", "ts": "1700000000.000800",
          "client_msg_id": "cm-s4"}  # fmt: skip
    await gateway.event(dm, event_id="EvS4")
    stop = (await fake_slack.wait_for("chat.stopStream"))[0]
    await gateway.settle()
    (start,) = fake_slack.calls_to("chat.startStream")
    # Slack streams replies to a request: the question's ts, no recipient in a DM.
    assert (start.args["channel"], start.args["thread_ts"]) == ("DUSER1", dm["ts"])
    assert "recipient_user_id" not in start.args and "recipient_team_id" not in start.args
    assert fake_slack.streams[stop.args["ts"]].text == final.text
    (posted,) = fake_slack.calls_to("chat.postMessage")  # the indicator, in the same thread
    assert posted.args["thread_ts"] == dm["ts"]
    assert [c.args["ts"] for c in fake_slack.calls_to("chat.delete")] == [posted.response["ts"]]
    (asked,) = r42_stub.chats
    assert asked.conversation == "slack:DUSER1"  # one memory per DM, not per question


async def test_a_top_level_dm_falls_back_to_post_then_update_in_its_thread(
    gateway: Gateway, r42_stub: R42Stub, fake_slack: FakeSlack
) -> None:
    fake_slack.overrides["chat.startStream"] = {"ok": False, "error": "not_allowed_token_type"}
    r42_stub.reply = streaming_reply(["Ant", "woord"], ChatReply(text="Antwoord"))
    dm = {"type": "message", "channel_type": "im", "channel": "DUSER1", "user": USER,
          "text": "Hoi", "ts": "1700000000.000900", "client_msg_id": "cm-s5"}  # fmt: skip
    await gateway.event(dm, event_id="EvS5")
    update = (await fake_slack.wait_for("chat.update"))[0]
    await gateway.settle()
    (posted,) = fake_slack.calls_to("chat.postMessage")
    assert posted.args["thread_ts"] == dm["ts"] and update.args["ts"] == posted.response["ts"]
    assert "Antwoord" in json.dumps(update.args["blocks"])
