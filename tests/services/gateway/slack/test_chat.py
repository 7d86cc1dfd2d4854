"""R42 chat in Slack: answers in the thread, sources, feedback, proposals and admin reviews."""

from __future__ import annotations

import json
import logging

import pytest

from services.gateway.slack import ids
from services.gateway.slack.blocks.chat import PROPOSAL_QUESTION, THINKING_TEXT
from services.gateway.slack.blocks.kit import block_problems
from services.gateway.slack.flows.chat import EMPTY_MENTION_HINT
from shared.bus import (
    ChatReply,
    KbDelta,
    KbDeltaApplied,
    KbDeltaDecided,
    Proposal,
    ProposalDecisionReply,
    SourceRef,
    Topic,
    jetstream,
    publish_event,
)
from shared.bus.subjects import ns_stream, ns_subject
from shared.store import QuizAttempt, Suggestion
from tests.fakes.fixtures import FAKE_SLACK_BOT_TOKEN, FAKE_SLACK_SIGNING_SECRET
from tests.fakes.slack_server import FakeSlack
from tests.services.gateway.conftest import R42Stub, Tap
from tests.services.gateway.harness import ADMIN, ADMIN_CHANNEL, USER, Gateway

DELTA = KbDelta(
    reason="Thuiswerkbudget ontbreekt in de kennisgraaf",
    topics=[
        Topic(
            id="thuiswerkbudget",
            label="Thuiswerkbudget",
            type="concept",
            description="Jaarlijks budget voor een thuiswerkplek.",
        )
    ],
)


def dm(text: str, *, ts: str = "1700000000.000500", user: str = USER) -> dict:
    return {
        "type": "message",
        "channel_type": "im",
        "channel": f"D{user[1:]}",
        "user": user,
        "text": text,
        "ts": ts,
        "client_msg_id": f"cm-{ts}",
    }


def all_text(call) -> str:
    return json.dumps(call.args.get("blocks"), ensure_ascii=False) + str(call.args.get("text", ""))


async def test_dm_answer_with_indicator_sources_and_feedback(
    gateway: Gateway, r42_stub: R42Stub, fake_slack: FakeSlack
) -> None:
    async def reply(req):
        return ChatReply(
            text="Je declareert via **Declaree**.",
            sources=[SourceRef(id="declaraties", label="Declaraties")],
            model="claude-haiku-4-5",
            prompt_version="r42-chat-1",
        )

    r42_stub.reply = reply
    await gateway.event(dm("Hoe declareer ik?"), event_id="EvC1")
    update = (await fake_slack.wait_for("chat.update"))[0]
    posted = fake_slack.calls_to("chat.postMessage")[0]
    assert THINKING_TEXT in all_text(posted)  # the working indicator came first
    assert update.args["ts"] == "1700000001.000100"  # …and was replaced by the answer
    text = all_text(update)
    assert "*Declaree*" in text and "Bronnen: Declaraties" in text
    feedback = next(b for b in update.args["blocks"] if b.get("block_id") == ids.BLOCK_FEEDBACK)
    assert feedback["type"] == "context_actions"
    element = feedback["elements"][0]
    assert element["type"] == "feedback_buttons" and element["action_id"] == ids.FEEDBACK
    down = element["negative_button"]["value"]
    req = r42_stub.chats[0]
    assert (req.user_id, req.text) == (USER, "Hoe declareer ik?")
    assert req.user_name == f"User {USER}"  # from users.info

    await gateway.action(
        ids.FEEDBACK,
        down,
        channel=update.args["channel"],
        message_ts=update.args["ts"],
        blocks=update.args["blocks"],
        action_type="feedback_buttons",
    )
    modal = (await fake_slack.wait_for("views.open"))[0]
    assert modal.args["view"]["callback_id"] == ids.FEEDBACK_VIEW and modal.response["ok"]
    thanks = (await fake_slack.wait_for("chat.update", 2))[1]
    assert "Bedankt voor je feedback" in all_text(thanks)
    assert not any(b.get("block_id") == ids.BLOCK_FEEDBACK for b in thanks.args["blocks"])
    assert "*Declaree*" in all_text(thanks)  # the answer itself stays
    await gateway.settle()
    stored = await gateway.ctx.store.feedback.get("cm-1700000000.000500", USER)
    assert stored is not None and stored.value == "down" and stored.user == USER
    assert stored.question == "Hoe declareer ik?" and stored.topic_ids == ["declaraties"]
    assert stored.answer == "Je declareert via **Declaree**."
    assert (stored.model, stored.prompt_version) == ("claude-haiku-4-5", "r42-chat-1")
    meta = modal.args["view"]["private_metadata"]
    await gateway.view(
        ids.FEEDBACK_VIEW, {"feedback_reason": {"reason": "Declaree bestaat niet meer"}},
        private_metadata=meta,
    )  # fmt: skip
    await gateway.settle()
    stored = await gateway.ctx.store.feedback.get("cm-1700000000.000500", USER)
    assert stored is not None and stored.reason == "Declaree bestaat niet meer"
    assert stored.value == "down" and stored.question == "Hoe declareer ik?"


async def test_a_thumbs_up_opens_no_modal_and_a_forged_value_is_ignored(
    gateway: Gateway, r42_stub: R42Stub, fake_slack: FakeSlack
) -> None:
    await gateway.action(ids.FEEDBACK, "sideways:x", action_type="feedback_buttons")
    await gateway.action(ids.FEEDBACK, "up:cm-unknown", action_type="feedback_buttons")
    await fake_slack.wait_for("respond")  # no message blocks to update: thanked privately
    await gateway.settle()
    assert not fake_slack.calls_to("views.open")
    stored = await gateway.ctx.store.feedback.get("cm-unknown", USER)
    assert stored is not None and stored.value == "up" and stored.question == ""


async def test_mention_with_only_whitespace_gets_a_hint(
    gateway: Gateway, r42_stub: R42Stub, fake_slack: FakeSlack
) -> None:
    event = {
        "type": "app_mention",
        "channel": "C0PUBLIC",
        "user": USER,
        "text": "<@UBOT>   \n ",
        "ts": "1700000000.000600",
    }
    await gateway.event(event, event_id="EvC2")
    posted = (await fake_slack.wait_for("chat.postMessage"))[0]
    assert EMPTY_MENTION_HINT.split(",")[0] in all_text(posted)
    assert posted.args["thread_ts"] == event["ts"]
    await gateway.settle()
    assert r42_stub.chats == []


async def test_a_question_during_the_quiz_gets_one_short_notice(
    gateway: Gateway, r42_stub: R42Stub, fake_slack: FakeSlack
) -> None:
    await gateway.ctx.store.quiz_attempts.start(
        QuizAttempt(id="att-1", user=USER, week="2026-W48", question_keys=["q1", "q2"])
    )
    await gateway.event(dm("wat is het antwoord op vraag 1?"), event_id="EvC3")
    await gateway.settle()
    assert r42_stub.chats == []  # the question never reaches R42
    (notice,) = fake_slack.calls_to("chat.postMessage")
    assert "Je quiz loopt nog" in all_text(notice) and "/quiz stop" in all_text(notice)
    assert THINKING_TEXT not in all_text(notice)


async def test_r42_unreachable_says_so(gateway: Gateway, fake_slack: FakeSlack) -> None:
    # No r42 responder on this namespace: the working indicator turns into a clear message.
    await gateway.event(dm("Hallo?"), event_id="EvC4")
    update = (await fake_slack.wait_for("chat.update"))[0]
    assert "niet bereikbaar" in all_text(update)


async def test_long_answer_is_split_within_limits(
    gateway: Gateway, r42_stub: R42Stub, fake_slack: FakeSlack
) -> None:
    long_text = "\n\n".join(f"Alinea {i}: " + "woord " * 400 for i in range(40))

    async def reply(req):
        return ChatReply(text=long_text)

    r42_stub.reply = reply
    await gateway.event(dm("Vertel alles"), event_id="EvC5")
    await fake_slack.wait_for("chat.update")
    await gateway.settle()
    messages = fake_slack.calls_to("chat.update") + fake_slack.calls_to("chat.postMessage")[1:]
    assert len(messages) >= 2
    for call in messages:
        assert block_problems(call.args["blocks"]) == []
    shown = "".join(
        b["text"]["text"] for c in messages for b in c.args["blocks"] if b["type"] == "section"
    )
    assert shown.count("Alinea") == 40


async def test_non_admin_yes_queues_for_review_and_admin_approves(
    gateway: Gateway, r42_stub: R42Stub, fake_slack: FakeSlack, tap: Tap
) -> None:
    store = gateway.ctx.store

    async def reply(req):
        return ChatReply(
            text="Dat weet ik niet.",
            proposal=Proposal(id="prop-1", delta=DELTA, summary="Nieuw onderwerp"),
        )

    async def decide(req):
        await store.suggestions.create(
            Suggestion(id="sug-1", delta=DELTA.model_dump(mode="json"), proposed_by=req.user_id)
        )
        return ProposalDecisionReply(status="pending_review", suggestion_id="sug-1")

    r42_stub.reply, r42_stub.decide = reply, decide
    await gateway.event(dm("Is er een thuiswerkbudget?"), event_id="EvC6")
    answer = (await fake_slack.wait_for("chat.update"))[0]
    assert PROPOSAL_QUESTION in all_text(answer)

    await gateway.action(ids.PROPOSAL_YES, "prop-1", blocks=answer.args["blocks"])
    review = (await fake_slack.wait_for("chat.postMessage", 2))[1]
    assert review.args["channel"] == ADMIN_CHANNEL
    assert "Thuiswerkbudget" in all_text(review) and ids.SUGGESTION_APPROVE in all_text(review)
    chip = (await fake_slack.wait_for("chat.update", 2))[1]
    assert ids.PROPOSAL_YES not in all_text(chip) and "beoordeelt" in all_text(chip)
    assert r42_stub.decisions[0].accept is True

    # A non-admin's Approve is refused privately and changes nothing…
    await gateway.action(
        ids.SUGGESTION_APPROVE,
        "sug-1",
        user=USER,
        channel=ADMIN_CHANNEL,
        blocks=review.args["blocks"],
    )
    refusal = (await fake_slack.wait_for("respond"))[0]
    assert refusal.args["response_type"] == "ephemeral" and "beheerders" in refusal.args["text"]
    await gateway.settle()
    assert (await store.suggestions.get("sug-1")).status == "pending"
    assert len(fake_slack.calls_to("chat.update")) == 2

    # …an admin's Approve decides it, publishes kb.delta.decided and says who decided.
    await gateway.action(
        ids.SUGGESTION_APPROVE,
        "sug-1",
        user=ADMIN,
        channel=ADMIN_CHANNEL,
        blocks=review.args["blocks"],
    )
    decided = (await tap.wait(KbDeltaDecided))[0]
    assert (decided.decision, decided.decided_by, decided.suggestion_id) == (
        "approved",
        ADMIN,
        "sug-1",
    )
    assert decided.delta == DELTA
    assert tap.of(KbDeltaDecided) == [decided]  # the non-admin click published nothing
    working = (await fake_slack.wait_for("chat.update", 3))[2]
    assert "Goedgekeurd" not in all_text(working)  # not before the KG owner applied it
    assert ids.SUGGESTION_APPROVE not in all_text(working)
    applied = KbDeltaApplied.caused_by(
        decided, actor="extractor", suggestion_id="sug-1", decision="approved",
        decided_by=ADMIN, proposed_by=USER, outcome="applied", topics=1,
    )  # fmt: skip
    await publish_event(gateway.ctx.broker, applied, namespace=gateway.namespace)
    final = (await fake_slack.wait_for("chat.update", 4))[3]
    assert f"Goedgekeurd door <@{ADMIN}>" in all_text(final) and "1 onderwerp" in all_text(final)

    # A second admin click (a Reject) does not change the decision on the stream.
    await gateway.action(
        ids.SUGGESTION_REJECT,
        "sug-1",
        user=ADMIN,
        channel=ADMIN_CHANNEL,
        blocks=review.args["blocks"],
    )
    notes = await fake_slack.wait_for("respond", 2)
    assert "al besloten" in notes[1].args["text"]
    js = jetstream(gateway.ctx.broker)
    last = await js.get_last_msg(
        ns_stream("KB", gateway.namespace), ns_subject(KbDeltaDecided.SUBJECT, gateway.namespace)
    )
    assert json.loads(last.data)["decision"] == "approved"
    assert len(fake_slack.calls_to("chat.update")) == 4


async def test_admin_yes_applies_without_review(
    gateway: Gateway, r42_stub: R42Stub, fake_slack: FakeSlack
) -> None:
    async def reply(req):
        return ChatReply(text="Zal ik dit toevoegen?", proposal=Proposal(id="prop-2", delta=DELTA))

    async def decide(req):
        # The real server decides from its own admin list, never from the request.
        return ProposalDecisionReply(status="applied" if req.user_id == ADMIN else "pending_review")

    r42_stub.reply, r42_stub.decide = reply, decide
    await gateway.event(dm("Voeg thuiswerkbudget toe", user=ADMIN), event_id="EvC7")
    answer = (await fake_slack.wait_for("chat.update"))[0]
    await gateway.action(ids.PROPOSAL_YES, "prop-2", user=ADMIN, blocks=answer.args["blocks"])
    chip = (await fake_slack.wait_for("chat.update", 2))[1]
    assert f"Toegevoegd aan de kennisgraaf door <@{ADMIN}>" in all_text(chip)
    await gateway.settle()
    assert len(fake_slack.calls_to("chat.postMessage")) == 1  # no review request


async def test_unknown_action_is_ignored_and_logged(
    gateway: Gateway, fake_slack: FakeSlack, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger="services.gateway")
    status, _ = await gateway.action("totally_unknown_action", "x")
    assert status == 200
    await gateway.settle()
    assert [c.method for c in fake_slack.calls if c.method != "auth.test"] == []
    assert any("unknown action" in r.getMessage() for r in caplog.records)


async def test_secrets_never_reach_the_logs(
    gateway: Gateway,
    r42_stub: R42Stub,
    fake_slack: FakeSlack,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG)
    await gateway.event(dm("Hoi"), event_id="EvC8")
    await fake_slack.wait_for("chat.update")
    await gateway.command("/r42", "onzin")
    await gateway.settle()
    logged = "\n".join(r.getMessage() for r in caplog.records)
    assert "chat.postMessage" in logged or "Sending a request" in logged  # debug logs ran
    assert FAKE_SLACK_BOT_TOKEN not in logged
    assert FAKE_SLACK_SIGNING_SECRET not in logged


async def test_group_dm_is_answered_once_when_r42_is_mentioned(
    gateway: Gateway, r42_stub: R42Stub, fake_slack: FakeSlack
) -> None:
    said = {
        "type": "message",
        "channel_type": "mpim",
        "channel": "G0GROUP",
        "user": USER,
        "text": "<@UBOT> hoe declareer ik?",
        "ts": "1700000002.000100",
        "client_msg_id": "cm-mpim-1",
    }
    await gateway.event(said, event_id="EvM1")
    mention = {k: v for k, v in said.items() if k != "channel_type"}
    await gateway.event({**mention, "type": "app_mention"}, event_id="EvM2")
    await gateway.event(
        {**said, "text": "zonder R42", "ts": "1700000002.000200", "client_msg_id": "cm-mpim-2"},
        event_id="EvM3",
    )
    await fake_slack.wait_for("chat.update")
    await gateway.settle()
    assert [c.text for c in r42_stub.chats] == ["hoe declareer ik?"]
    assert r42_stub.chats[0].conversation == "slack:G0GROUP:1700000002.000100"
