"""Slack flows over the real services (offline LLM): quiz, proposal review, upload, /learn."""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from services.gateway.slack import ids
from shared.bus import KbUpdated, SourceUploaded
from shared.store import iso_week
from tests.fakes.anthropic_server import text_reply
from tests.fakes.fixtures import FAKE_ANTHROPIC_API_KEY
from tests.fakes.slack_server import FakeSlack, SlackCall
from tests.scenarios.stack import (
    Stack,
    eventually,
    seed,
    stack_settings,
    start_stack,
    stop_stack,
)
from tests.services.gateway.harness import (
    ADMIN,
    ADMIN_CHANNEL,
    USER,
    Tap,
    gateway_settings,
    make_tap,
)

pytestmark = pytest.mark.timeout(90)


def text_of(call) -> str:
    return json.dumps(call.args.get("blocks"), ensure_ascii=False) + str(call.args.get("text", ""))


def buttons(call) -> list[dict]:
    return [e for b in call.args["blocks"] if b["type"] == "actions" for e in b["elements"]]


@pytest.fixture
async def stack(
    nats_url: str, tmp_path: Path, fake_slack: FakeSlack, unique: str
) -> AsyncIterator[Stack]:
    settings = stack_settings(nats_url=nats_url, tmp_path=tmp_path, fake=fake_slack)
    await seed(settings)
    running = await start_stack(settings, fake=fake_slack, namespace=f"x{unique}")
    try:
        yield running
    finally:
        await stop_stack(running)


@pytest.fixture
async def tap(stack: Stack) -> Tap:
    return await make_tap(stack.gateway)


async def test_full_quiz_flow(stack: Stack, fake_slack: FakeSlack) -> None:
    gw = stack.gateway
    await gw.command("/quiz")
    message = (
        await fake_slack.wait_for(
            "chat.update", where=lambda c: "Vraag 1/10" in text_of(c), timeout=30
        )
    )[0]
    ts = message.args["ts"]
    # While the quiz runs a question gets one short notice, no answer (the real r42 is up).
    await gw.event(
        {
            "type": "message",
            "channel_type": "im",
            "channel": "DUSER1",
            "user": USER,
            "text": "Hoe vraag ik verlof aan?",
            "ts": "1700000000.7",
            "client_msg_id": "cm-quiz",
        },
        event_id="EvSQ1",
    )
    notice = (
        await fake_slack.wait_for("chat.postMessage", where=lambda c: "quiz stop" in text_of(c))
    )[0]
    assert "Je quiz loopt nog" in text_of(notice)

    def quiz_posts(c) -> bool:
        return "Vraag" in text_of(c) or "Quiz afgerond" in text_of(c)

    for i in range(10):
        pick = buttons(message)[0]
        await gw.action(
            pick["action_id"], pick["value"], message_ts=ts, blocks=message.args["blocks"]
        )
        await fake_slack.wait_for(
            "chat.update",
            where=lambda c, t=ts: (
                c.args["ts"] == t and ("Goed!" in text_of(c) or "Helaas" in text_of(c))
            ),
        )
        message = (await fake_slack.wait_for("chat.postMessage", 1 + i, where=quiz_posts))[-1]
        ts = message.response["ts"]
        if i < 9:
            assert f"Vraag {i + 2}/10" in text_of(message)
    assert "Quiz afgerond" in text_of(message)
    verdicts = [c for c in fake_slack.calls_to("chat.update") if "antwoord is" in text_of(c)]
    right = sum("Goed!" in text_of(c) for c in verdicts)
    assert len(verdicts) == 10 and f"*{right}* van de 10 vragen goed" in text_of(message)

    await gw.command("/leaderboard")
    board = (await fake_slack.wait_for("respond"))[0]
    weekly = next(b["text"]["text"] for b in board.args["blocks"] if "Deze week" in json.dumps(b))
    score = await stack.store.scores.get(USER, iso_week())
    assert score is not None and f"<@{USER}>" in weekly and f"{score.points} pt" in weekly
    await gw.settle()
    dm_replies = [c for c in fake_slack.calls_to("chat.postMessage") if "R42 denkt" in text_of(c)]
    assert dm_replies == []  # no working indicator, no answer: only the notice
    assert len([c for c in fake_slack.calls if "quiz stop" in text_of(c)]) == 1


async def test_full_proposal_flow(stack: Stack, fake_slack: FakeSlack, tap: Tap) -> None:
    gw = stack.gateway
    question = "Er is een rol Scrum Master die de sprints van het team begeleidt."
    await gw.event(
        {
            "type": "message",
            "channel_type": "im",
            "channel": "DUSER1",
            "user": USER,
            "text": question,
            "ts": "1700000000.8",
            "client_msg_id": "cm-prop",
        },
        event_id="EvSP1",
    )
    # A top-level DM's answer streams under the question; the chip comes with its end.
    answer = (await fake_slack.wait_for("chat.stopStream", timeout=30))[0]
    yes = next(b for b in buttons(answer) if b["action_id"] == ids.PROPOSAL_YES)
    assert await stack.store.topics.get("scrum-master") is None

    await gw.action(ids.PROPOSAL_YES, yes["value"], blocks=answer.args["blocks"])
    review = (
        await fake_slack.wait_for(
            "chat.postMessage", 1, where=lambda c: c.args["channel"] == ADMIN_CHANNEL
        )
    )[-1]
    assert "Scrum Master" in text_of(review)
    approve = next(b for b in buttons(review) if b["action_id"] == ids.SUGGESTION_APPROVE)

    # A non-admin's Approve is refused and changes nothing.
    await gw.action(
        ids.SUGGESTION_APPROVE,
        approve["value"],
        user=USER,
        channel=ADMIN_CHANNEL,
        blocks=review.args["blocks"],
    )
    assert "beheerders" in (await fake_slack.wait_for("respond"))[0].args["text"]
    assert (await stack.store.suggestions.get(approve["value"])).status == "pending"

    await gw.action(
        ids.SUGGESTION_APPROVE,
        approve["value"],
        user=ADMIN,
        channel=ADMIN_CHANNEL,
        blocks=review.args["blocks"],
    )
    updated = (await tap.wait(KbUpdated, timeout=30))[-1]
    assert "scrum-master" in updated.changed_ids
    topic = await stack.store.topics.get("scrum-master")
    assert topic is not None and topic.type == "role"
    # The extractor marks the suggestion decided right after publishing kb.updated.
    suggestion = await eventually(
        lambda: stack.store.suggestions.get(approve["value"]),
        lambda s: s is not None and s.status != "pending",
    )
    assert (suggestion.status, suggestion.decided_by) == ("approved", ADMIN)
    decided = await fake_slack.wait_for("chat.update", where=lambda c: "Goedgekeurd" in text_of(c))
    assert f"<@{ADMIN}>" in text_of(decided[0]) and "toegevoegd: 1 onderwerp" in text_of(decided[0])
    # The extractor's report reaches the proposer too.
    told = await fake_slack.wait_for(
        "chat.postMessage",
        where=lambda c: c.args["channel"] == "DUSER1" and "Je voorstel" in text_of(c),
    )
    assert "Goedgekeurd" in text_of(told[0])


async def test_upload_is_extracted_with_progress(
    stack: Stack, fake_slack: FakeSlack, tap: Tap
) -> None:
    sections = "\n\n".join(
        f"## Thema {i}\n\n" + f"Thema {i} gaat over samenwerken in project {i}. " * 6
        for i in range(1, 5)
    )
    content = f"# Werkafspraken\n\n{sections}\n".encode()
    fake_slack.add_file("FUP", name="werkafspraken.md", content=content, mimetype="text/markdown")
    await stack.gateway.event(
        {"type": "file_shared", "file_id": "FUP", "user_id": ADMIN, "channel_id": "DADMIN1"},
        event_id="EvSU1",
    )
    uploaded = (await tap.wait(SourceUploaded))[0]
    progress = (await fake_slack.wait_for("chat.postMessage"))[0]
    final = (
        await fake_slack.wait_for(
            "chat.update", timeout=60, where=lambda c: "ingelezen:" in text_of(c)
        )
    )[0]
    updates = [
        c for c in fake_slack.calls_to("chat.update") if c.args["ts"] == progress.response["ts"]
    ]
    assert len(updates) >= 2  # at least one per-chunk update before the end
    source = await stack.store.sources.get(uploaded.source_id)
    assert source is not None and source.status == "completed" and (source.chunks_total or 0) > 1
    assert "onderwerpen toegevoegd" in text_of(final)
    assert len(await stack.store.topics.list()) > 4


async def test_learn_article_and_infographic(stack: Stack, fake_slack: FakeSlack) -> None:
    gw = stack.gateway
    await gw.command("/learn", "", user=ADMIN)
    article = (await fake_slack.wait_for("chat.update", timeout=30))[0]
    assert "Kernpunten" in text_of(article) and ids.REFINE_OPEN in text_of(article)
    await gw.command("/learn", "infographic", user=ADMIN)
    await fake_slack.wait_for("files.completeUploadExternal", timeout=30)
    await asyncio.sleep(0)
    pngs = [v for v in fake_slack.file_contents.values() if v.startswith(b"\x89PNG")]
    assert pngs


GATEWAY_DIR = Path(__file__).resolve().parents[2] / "services" / "gateway"
MAX_GATEWAY_FILES_PER_DM = 13  # with streaming.py (DMs stream) and core/chat_retry.py
"""HTTP, listener, dedupe, background, flow, blocks, Web API, streaming, core chat, feedback."""


async def test_a_dm_answer_passes_through_few_gateway_files(
    stack: Stack, fake_slack: FakeSlack
) -> None:
    """Event → listener → flow → core → rpc → answer posted: the gateway files on that path."""
    seen: list[str] = []

    def profile(frame, event, _arg) -> None:
        name = frame.f_code.co_filename
        if event == "call" and name.startswith(str(GATEWAY_DIR)) and name not in seen:
            seen.append(name)

    sys.setprofile(profile)
    try:
        await stack.gateway.event(
            {
                "type": "message",
                "channel_type": "im",
                "channel": "D0USER",
                "user": USER,
                "text": "Hoe vraag ik verlof aan?",
                "ts": "1700000000.000100",
                "client_msg_id": "cm-path-1",
            },
            event_id="Ev-path-1",
        )
        answer = (
            await fake_slack.wait_for(
                "chat.stopStream", where=lambda c: "r42_feedback" in text_of(c), timeout=30
            )
        )[0]
    finally:
        sys.setprofile(None)
    assert "Verlof" in fake_slack.streams[answer.args["ts"]].text
    files = [str(Path(f).relative_to(GATEWAY_DIR)) for f in seen]
    assert 3 <= len(files) <= MAX_GATEWAY_FILES_PER_DM, "\n".join(files)
    assert not any(f.startswith("console") for f in files), files


def _sent_text(request) -> str:
    """Everything a model request carries in its messages (text blocks and plain strings)."""
    return json.dumps(request.body.get("messages"), ensure_ascii=False)


def _answers(fake: FakeSlack) -> list[SlackCall]:
    """Posted (chat.update) and streamed (chat.stopStream) answers with feedback buttons."""
    return [
        c
        for c in fake.calls
        if c.method in ("chat.update", "chat.stopStream") and "r42_feedback" in text_of(c)
    ]


async def test_each_conversation_has_its_own_memory(
    nats_url: str, tmp_path: Path, fake_slack: FakeSlack, fake_anthropic, unique: str
) -> None:
    """A DM, a channel thread and another DM never see each other's turns."""
    settings = gateway_settings(
        nats_url=nats_url,
        tmp_path=tmp_path,
        fake=fake_slack,
        llm="anthropic",
        anthropic_base_url=fake_anthropic.url,
        anthropic_api_key=FAKE_ANTHROPIC_API_KEY,
    )
    await seed(settings)
    running = await start_stack(settings, fake=fake_slack, namespace=f"m{unique}", services=["r42"])
    fake_anthropic.default = lambda _body: text_reply("Dat staat in het handboek.")
    gw = running.gateway
    try:

        async def ask(event: dict, n: int) -> None:
            # DMs get the answer in place of the indicator; thread answers are streamed.
            await gw.event(event, event_id=f"Ev-mem-{n}")
            deadline = asyncio.get_running_loop().time() + 30
            while len(_answers(fake_slack)) < n:
                assert asyncio.get_running_loop().time() < deadline, "answer not seen in 30 s"
                await asyncio.sleep(0.02)

        dm = {"type": "message", "channel_type": "im", "channel": "D0USER", "user": USER}
        await ask({**dm, "text": "Mijn salaris geheim-DM-1?", "ts": "1.1", "client_msg_id": "a"}, 1)
        await ask({**dm, "text": "En de bonus?", "ts": "1.2", "client_msg_id": "b"}, 2)
        assert "geheim-DM-1" in _sent_text(fake_anthropic.requests[-1])  # the DM remembers
        mention = {
            "type": "app_mention",
            "channel": "C0PUBLIC",
            "user": USER,
            "text": "<@UBOT> Hoe vraag ik verlof aan?",
            "ts": "2.1",
        }
        await ask(mention, 3)
        channel_request = _sent_text(fake_anthropic.requests[-1])
        assert "verlof" in channel_request
        assert "geheim-DM-1" not in channel_request and "bonus" not in channel_request
        in_thread = {**mention, "text": "<@UBOT> En ziekte?", "ts": "2.2", "thread_ts": "2.1"}
        await ask(in_thread, 4)
        thread_request = _sent_text(fake_anthropic.requests[-1])
        assert "verlof" in thread_request and "geheim-DM-1" not in thread_request
        other_dm = {**dm, "channel": "D0USER2", "ts": "3.1", "client_msg_id": "c"}
        await ask({**other_dm, "text": "Wat is onboarding?"}, 5)
        assert "geheim-DM-1" not in _sent_text(fake_anthropic.requests[-1])
    finally:
        await stop_stack(running)
