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
