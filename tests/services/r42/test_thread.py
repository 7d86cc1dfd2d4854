"""Thread rules: greeting on an empty thread, 50 kept, the last 12 turns sent with one notice."""

from __future__ import annotations

from datetime import timedelta

from services.r42.knowledge import KbCache
from services.r42.prompts import GREETING, HISTORY_TRUNCATED
from services.r42.thread import clear_thread, history_messages, history_turns
from services.r42.turn import chat_turn
from shared.bus import ChatRequest
from shared.llm import LLMRuntime
from shared.store import THREAD_MAX_MESSAGES, Store, ThreadMessage, utcnow
from tests.fakes.anthropic_server import FakeAnthropic, text_reply


def _msg(role: str, text: str, i: int = 0) -> ThreadMessage:
    return ThreadMessage(role=role, text=text, at=utcnow() + timedelta(milliseconds=i))  # type: ignore[arg-type]


def _pairs(n: int, *, greeting: bool = True) -> list[ThreadMessage]:
    out = [_msg("assistant", GREETING)] if greeting else []
    for i in range(n):
        out += [_msg("user", f"vraag {i}", 2 * i), _msg("assistant", f"antwoord {i}", 2 * i + 1)]
    return out


def test_turns_skip_the_greeting_and_unanswered_messages() -> None:
    history = [
        _msg("assistant", GREETING), _msg("user", "weggevallen"), _msg("user", "vraag"),
        _msg("assistant", "antwoord"), _msg("assistant", "aanvulling"),
    ]  # fmt: skip
    assert history_turns(history) == [("vraag", "antwoord\n\naanvulling")]


def test_twelve_turns_sent_without_notice() -> None:
    messages = history_messages(_pairs(12))
    assert len(messages) == 24
    assert messages[0] == {"role": "user", "content": "vraag 0"}  # greeting not sent
    assert [m["role"] for m in messages] == ["user", "assistant"] * 12
    assert HISTORY_TRUNCATED not in str(messages)


def test_older_turns_dropped_with_one_notice() -> None:
    messages = history_messages(_pairs(20))
    assert len(messages) == 24
    assert messages[0]["content"] == [
        {"type": "text", "text": HISTORY_TRUNCATED},
        {"type": "text", "text": "vraag 8"},
    ]
    assert messages[-1] == {"role": "assistant", "content": "antwoord 19"}
    assert str(messages).count(HISTORY_TRUNCATED) == 1


async def test_empty_thread_gets_a_greeting_and_the_turn_pair(
    store: Store, kb: KbCache, fake_anthropic: FakeAnthropic, fake_llm: LLMRuntime
) -> None:
    fake_anthropic.enqueue(text_reply("Hallo Ann."))
    await chat_turn(store=store, kb=kb, request=ChatRequest(user_id="U1", text="Hoi"))
    thread = await store.threads.get("U1")
    assert [(m.role, m.text) for m in thread] == [
        ("assistant", GREETING), ("user", "Hoi"), ("assistant", "Hallo Ann."),
    ]  # fmt: skip
    # The API conversation starts with the user's turn, not with R42's greeting.
    assert fake_anthropic.requests[0].body["messages"] == [{"role": "user", "content": "Hoi"}]


async def test_a_long_thread_keeps_50_and_sends_12_turns_plus_the_question(
    store: Store, kb: KbCache, fake_anthropic: FakeAnthropic, fake_llm: LLMRuntime
) -> None:
    await store.threads.append("U1", _pairs(30))
    fake_anthropic.enqueue(text_reply("Antwoord 30."))
    # A question the KB answers: below the relevance floor R42 replaces the model's text.
    question = "Hoe vraag ik verlof aan?"
    await chat_turn(store=store, kb=kb, request=ChatRequest(user_id="U1", text=question))
    thread = await store.threads.get("U1")
    assert len(thread) == THREAD_MAX_MESSAGES == 50
    assert (thread[-2].text, thread[-1].text) == (question, "Antwoord 30.")
    sent = fake_anthropic.requests[0].body["messages"]
    assert len(sent) == 12 * 2 + 1
    assert sent[0]["content"][0] == {"type": "text", "text": HISTORY_TRUNCATED}
    assert sent[0]["content"][1]["text"] == "vraag 18"
    assert sent[-1] == {"role": "user", "content": question}
    assert str(sent).count(HISTORY_TRUNCATED) == 1


async def test_clear_wipes_and_reseeds_the_greeting(store: Store) -> None:
    await store.threads.append("U1", _pairs(3))
    reply = await clear_thread(store=store, user_id="U1")
    assert reply.removed == 7 and reply.greeting == GREETING
    assert [(m.role, m.text) for m in await store.threads.get("U1")] == [("assistant", GREETING)]
