"""The fake Slack Web API answers the real slack_sdk client and records calls."""

from __future__ import annotations

import pytest
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from tests.fakes.slack_server import FakeSlack


async def test_records_post_and_update() -> None:
    with FakeSlack() as fake:
        client = AsyncWebClient(token="xoxb-test", base_url=fake.base_url)
        posted = await client.chat_postMessage(channel="C1", text="hoi", blocks=[])
        await client.chat_update(channel="C1", ts=posted["ts"], text="klaar")
        assert [c.method for c in fake.calls] == ["chat.postMessage", "chat.update"]
        assert fake.calls_to("chat.update")[0].args["ts"] == posted["ts"]
        assert fake.calls_to("chat.postMessage")[0].args["text"] == "hoi"


async def test_files_info_and_download() -> None:
    with FakeSlack() as fake:
        fake.add_file("F1", name="a.md", content=b"# Titel", mimetype="text/markdown")
        client = AsyncWebClient(token="xoxb-test", base_url=fake.base_url)
        info = await client.files_info(file="F1")
        assert info["file"]["size"] == 7
        with pytest.raises(SlackApiError, match="file_not_found"):
            await client.files_info(file="F404")


async def test_argument_rules_are_slacks() -> None:
    with FakeSlack() as fake:
        client = AsyncWebClient(token="xoxb-test", base_url=fake.base_url)
        with pytest.raises(SlackApiError) as missing:
            await client.api_call("chat.update", json={"channel": "C1", "text": "x"})
        assert missing.value.response.data == {
            "ok": False,
            "error": "invalid_arguments",
            "response_metadata": {"messages": ["[ERROR] missing required field: ts"]},
        }
        with pytest.raises(SlackApiError, match="invalid_arguments") as unknown:
            await client.api_call(
                "assistant.threads.setStatus",
                json={"channel_id": "D1", "thread_ts": "1.2", "status": "x", "colour": "red"},
            )
        assert "unsupported argument: colour" in str(unknown.value.response.data)
        # The SDK warns about a missing text itself; Slack then refuses the call.
        with pytest.warns(UserWarning, match="top-level `text`"):
            with pytest.raises(SlackApiError, match="no_text"):
                await client.chat_postMessage(channel="C1")
        with pytest.raises(SlackApiError, match="not_authed"):
            await AsyncWebClient(base_url=fake.base_url).chat_postMessage(channel="C1", text="x")
        with pytest.raises(SlackApiError, match="unknown_method"):
            await client.api_call("chat.frobnicate", json={})


async def test_block_kit_limits_are_enforced() -> None:
    section = {"type": "section", "text": {"type": "mrkdwn", "text": "x"}}
    with FakeSlack() as fake:
        client = AsyncWebClient(token="xoxb-test", base_url=fake.base_url)
        with pytest.raises(SlackApiError, match="invalid_blocks") as too_many:
            await client.chat_postMessage(channel="C1", text="x", blocks=[section] * 51)
        assert "at most 50 blocks" in str(too_many.value.response.data)
        long_text = {"type": "section", "text": {"type": "mrkdwn", "text": "x" * 3001}}
        with pytest.raises(SlackApiError, match="invalid_blocks"):
            await client.chat_postMessage(channel="C1", text="x", blocks=[long_text])
        bad_feedback = {
            "type": "context_actions",
            "elements": [{"type": "feedback_buttons", "positive_button": {"text": {}}}],
        }
        with pytest.raises(SlackApiError, match="invalid_blocks"):
            await client.chat_postMessage(channel="C1", text="x", blocks=[bad_feedback])
        ok = await client.chat_postMessage(channel="C1", text="x", blocks=[section] * 50)
        assert ok["ok"] is True
