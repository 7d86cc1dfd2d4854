"""Core parts: upload checks and extraction progress."""

from __future__ import annotations

import pytest

from services.gateway.core.models import Progress
from services.gateway.core.uploads import check_text
from shared.bus import SourceCompleted, SourceFailed, SourceProgress
from shared.errors import BadInputError


def test_check_text() -> None:
    assert check_text(b"# Kop\nTekst", max_bytes=100) == "# Kop\nTekst"
    assert check_text("\ufeffmet BOM".encode(), max_bytes=100) == "met BOM"
    for data, limit, message in (
        (b"a" * 11, 10, "maximum"),
        (b"a\x00b", 100, "binair"),
        (b"\xff\xfe\xfa", 100, "UTF-8"),
        (b"   \n", 100, "leeg"),
        (bytes(range(1, 32)) * 4, 1000, "binair"),
    ):
        with pytest.raises(BadInputError, match=message):
            check_text(data, max_bytes=limit)


def test_progress_from_events() -> None:
    running = Progress.of(
        SourceProgress(actor="x", source_id="s", chunks_done=1, chunks_total=3, topics_added=2)
    )
    assert (running.state, running.chunks_done, running.topics_added, running.final) == (
        "running",
        1,
        2,
        False,
    )
    done = Progress.of(
        SourceCompleted(
            actor="x", source_id="s", chunks_done=3, chunks_total=3, relations_added=4, duration=1.0
        )
    )
    assert done.state == "completed" and done.final and done.relations_added == 4
    failed = Progress.of(SourceFailed(actor="x", source_id="s", error="model refused"))
    assert failed.state == "failed" and failed.error == "model refused"
    assert (
        Progress.of(SourceFailed(actor="x", source_id="s", error="cancelled by U1")).state
        == "cancelled"
    )
