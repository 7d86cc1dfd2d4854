"""Teams file uploads read every format with the rules of every other entry point."""

from __future__ import annotations

import pytest

from shared.bus import SourceUploaded
from shared.formats import read_document
from tests.services.gateway.conftest import R42Stub
from tests.services.gateway.harness import make_tap
from tests.services.gateway.teams.conftest import Teams
from tests.services.gateway.teams.test_uploads import file_message
from tests.shared.formats.documents import RAW_SYNTAX, Case, all_cases


@pytest.mark.parametrize("case", all_cases(), ids=lambda c: c.name)
async def test_an_admin_upload_in_any_format(teams: Teams, r42: R42Stub, case: Case) -> None:
    tap = await make_tap(teams)  # type: ignore[arg-type]
    await teams.post(file_message(teams, case.name, case.data))
    await teams.settle()
    if case.text:
        [uploaded] = await tap.wait(SourceUploaded)
        text = await teams.ctx.store.source_texts.get(uploaded.source_id)
        assert uploaded.name == case.name and text is not None
        assert case.text in text and not any(raw in text for raw in RAW_SYNTAX)
        # The same text the CLI and the handbook sync read from these bytes.
        assert text == read_document(case.data, name=case.name, max_bytes=10**7).text
        if case.heading:
            assert "\n## " in text  # headings kept as structure for the extractor
        return
    texts = [c.card_text for c in teams.connector.calls]
    assert any(f"{case.name}: {case.error_nl}" in t for t in texts), texts
    assert tap.of(SourceUploaded) == []
    assert await teams.ctx.store.sources.list(limit=10) == []
