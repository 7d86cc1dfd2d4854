"""Chat in Teams against the fake Bot Connector: personal chat, channel @mention, redeliveries."""

from __future__ import annotations

from shared.bus import ChatReply, ChatRequest, SourceRef
from tests.services.gateway.conftest import R42Stub
from tests.services.gateway.teams.activities import (
    CHANNEL,
    USER_AAD,
    channel_mention,
    personal_conversation,
    personal_message,
)
from tests.services.gateway.teams.conftest import Teams


async def test_personal_question_is_answered_with_sources_and_feedback(
    teams: Teams, r42: R42Stub
) -> None:
    async def reply(req: ChatRequest) -> ChatReply:
        return ChatReply(
            text=f"Antwoord op: {req.text}", sources=[SourceRef(id="t-reis", label="Reiskosten")]
        )

    r42.reply = reply
    activity = personal_message(teams.connector.url, "Hoe declareer ik reiskosten?")
    status, _ = await teams.post(activity)
    assert status == 202
    await teams.settle()
    conv = personal_conversation(USER_AAD)
    kinds = [c.activity["type"] for c in teams.connector.of(conv)]
    assert kinds == ["typing", "message"]  # the typing indicator first, then the answer
    answer = teams.connector.of(conv, kind="message")[0]
    assert "Antwoord op: Hoe declareer ik reiskosten?" in answer.card_text
    assert "Bronnen: Reiskosten" in answer.card_text
    verbs = [a["verb"] for a in answer.cards[0]["actions"]]
    assert verbs == ["feedback", "feedback"]
    # The server decides who is asking: the AAD object id, not an admin.
    assert [c.user_id for c in r42.chats] == [USER_AAD]
    # Replies carry the bot as sender and the user as recipient.
    assert answer.activity["from"]["id"].startswith("28:")
    assert answer.activity["recipient"]["aadObjectId"] == USER_AAD


async def test_channel_mention_is_answered_in_its_thread(teams: Teams, r42: R42Stub) -> None:
    activity = channel_mention(teams.connector.url, "Wat is de onboarding?")
    status, _ = await teams.post(activity)
    assert status == 202
    await teams.settle()
    assert [r.text for r in r42.chats] == ["Wat is de onboarding?"]  # the mention is stripped
    conv = activity["conversation"]["id"]
    assert conv.startswith(f"{CHANNEL};messageid=")
    answer = teams.connector.of(conv, kind="message")[0]
    assert answer.reply_to_id == activity["id"]
    assert "Antwoord op: Wat is de onboarding?" in answer.card_text


async def test_a_redelivered_activity_is_answered_once(teams: Teams, r42: R42Stub) -> None:
    activity = personal_message(teams.connector.url, "Wie is mijn buddy?")
    first, _ = await teams.post(activity)
    second, _ = await teams.post(activity)  # Teams' retry: the same activity id
    assert (first, second) == (202, 202)
    await teams.settle()
    assert len(r42.chats) == 1
    assert len(teams.connector.of(personal_conversation(USER_AAD), kind="message")) == 1


async def test_empty_mention_gets_a_hint_without_asking_r42(teams: Teams, r42: R42Stub) -> None:
    activity = channel_mention(teams.connector.url, "")
    await teams.post(activity)
    await teams.settle()
    assert r42.chats == []
    [hint] = teams.connector.of(activity["conversation"]["id"], kind="message")
    assert "Stel me gerust een vraag" in hint.card_text


async def test_help_lists_the_commands(teams: Teams, r42: R42Stub) -> None:
    await teams.post(personal_message(teams.connector.url, "help"))
    await teams.settle()
    [card] = teams.connector.of(personal_conversation(USER_AAD), kind="message")
    assert "leaderboard" in card.card_text and "quiz" in card.card_text
    assert r42.chats == []


async def test_malformed_activity_is_a_400(teams: Teams) -> None:
    status, _ = await teams.post({"type": "message", "conversation": {"id": 5}, "from": "x"})
    assert status == 400
    status, _ = await teams.post({"type": "message"})  # no conversation
    assert status == 400


async def test_each_chat_and_thread_has_its_own_memory(teams: Teams, r42: R42Stub) -> None:
    url = teams.connector.url
    first = channel_mention(url, "Vraag in draad 1")
    await teams.post(first)
    await teams.post(channel_mention(url, "Vervolg in draad 1", thread=first["id"]))
    await teams.post(channel_mention(url, "Vraag in draad 2"))
    await teams.post(personal_message(url, "Vraag in mijn chat"))
    await teams.settle()
    keys = {r.text: r.conversation for r in r42.chats}
    assert keys["Vraag in draad 1"] == keys["Vervolg in draad 1"]
    assert (
        len({keys["Vraag in draad 1"], keys["Vraag in draad 2"], keys["Vraag in mijn chat"]}) == 3
    )
    assert all(k.startswith("teams:") for k in keys.values())


async def test_admin_commands_are_for_admins_only(teams: Teams, r42: R42Stub) -> None:
    from tests.services.gateway.teams.activities import ADMIN_AAD

    url = teams.connector.url
    await teams.post(personal_message(url, "sources"))
    await teams.post(personal_message(url, "diagnostics"))
    await teams.post(personal_message(url, "sources", aad=ADMIN_AAD, name="Bea Beheer"))
    await teams.settle()
    replies = teams.connector.of(personal_conversation(USER_AAD), kind="message")
    mine = [c.card_text for c in replies]
    assert len(mine) == 2 and all("alleen beheerders" in t for t in mine)
    [admin] = teams.connector.of(personal_conversation(ADMIN_AAD), kind="message")
    assert "Bronnen" in admin.card_text and "Nog geen bronnen" in admin.card_text
