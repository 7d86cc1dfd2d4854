"""Slack file uploads read every format with the rules of every other entry point."""

from __future__ import annotations

import pytest

from shared.bus import SourceUploaded
from shared.formats import read_document
from tests.fakes.slack_server import FakeSlack
from tests.services.gateway.harness import Gateway, Tap
from tests.services.gateway.slack.test_uploads import shared, text_of
from tests.shared.formats.documents import RAW_SYNTAX, Case, all_cases


@pytest.mark.parametrize("case", all_cases(), ids=lambda c: c.name)
async def test_an_admin_upload_in_any_format(
    gateway: Gateway, fake_slack: FakeSlack, tap: Tap, case: Case
) -> None:
    fake_slack.add_file("FX", name=case.name, content=case.data, mimetype=case.mimetype)
    assert (await gateway.event(shared("FX"), event_id="EvFX"))[0] == 200
    if case.text:
        [uploaded] = await tap.wait(SourceUploaded)
        text = await gateway.ctx.store.source_texts.get(uploaded.source_id)
        assert uploaded.name == case.name and text is not None
        assert case.text in text and not any(raw in text for raw in RAW_SYNTAX)
        assert text == read_document(case.data, name=case.name, max_bytes=10**7).text
        return
    note = (await fake_slack.wait_for("chat.postMessage"))[0]
    assert case.error_nl in text_of(note) and "niet ingelezen" in text_of(note), text_of(note)
    await gateway.settle()
    assert tap.of(SourceUploaded) == []
    assert await gateway.ctx.store.sources.list() == []
