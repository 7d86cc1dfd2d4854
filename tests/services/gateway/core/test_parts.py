"""Core parts: upload checks and extraction progress."""

from __future__ import annotations

import io

import docx
import pytest
from fpdf import FPDF

from services.gateway.core.models import Progress
from services.gateway.core.sources import describe_sync
from services.gateway.core.uploads import check_text
from shared.bus import SourceCompleted, SourceFailed, SourceProgress
from shared.bus.extractor_rpc import HandbookSyncReply, SyncWaiting, WaitingRelation
from shared.errors import BadInputError


def _pdf(line: str) -> bytes:
    pdf = FPDF()
    pdf.set_font("helvetica", size=12)
    pdf.add_page()
    pdf.cell(0, 10, line)
    return bytes(pdf.output())


def _docx(heading: str, body: str) -> bytes:
    document = docx.Document()
    document.add_heading(heading, level=1)
    document.add_paragraph(body)
    buffer = io.BytesIO()
    document.save(buffer)
    return buffer.getvalue()


def test_check_text() -> None:
    # Text comes back tidied the way every entry point stores it (one final newline).
    assert check_text(b"# Kop\nTekst", max_bytes=100) == "# Kop\nTekst\n"
    assert check_text("\ufeffmet BOM".encode(), max_bytes=100) == "met BOM\n"
    # Latin-1 is read (with a warning in the formats module), not refused.
    assert check_text("café".encode("latin-1"), max_bytes=100) == "café\n"
    for data, limit, message in (
        (b"a" * 11, 10, "maximum"),
        (b"a\x00b", 100, "binair"),
        (b"   \n", 100, "leeg"),
        (bytes(range(1, 32)) * 4, 1000, "binair"),
        (b"\x89PNG\r\n\x1a\n\x00\x00", 100, "binair"),
        (b"{\\rtf1 Hallo}", 100, "niet lezen"),
    ):
        with pytest.raises(BadInputError, match=message):
            check_text(data, max_bytes=limit)


def test_check_text_reads_every_supported_format() -> None:
    """Slack, Teams and the console take the same formats as the CLI and the sync."""
    limit = 1_000_000
    pdf = check_text(_pdf("Je hebt 27 vakantiedagen."), max_bytes=limit, name="gids.pdf")
    assert "27 vakantiedagen" in pdf
    word = check_text(_docx("Verlof", "Vraag het aan via HR."), max_bytes=limit, name="v.docx")
    assert word.startswith("# Verlof") and "via HR" in word
    html = b"<html><body><nav>menu</nav><h1>Reizen</h1><p>Declareer binnen 30 dagen.</p>"
    page = check_text(html + b"</body></html>", max_bytes=limit, name="reizen.html")
    assert "# Reizen" in page and "30 dagen" in page and "menu" not in page
    with pytest.raises(BadInputError, match="kan R42 niet lezen"):
        check_text(b"a,b\n1,2\n", max_bytes=limit, name="cijfers.xlsx")


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


def test_a_sync_reply_is_worded_in_dutch_with_what_waits() -> None:
    one = WaitingRelation(source="teamlead", target="verlof", type="related_to", file="rollen.md")
    waiting = SyncWaiting(newly_waiting=7, expired=1, still_waiting=7, max_wait_days=30,
                          newly_shown=[one] * 5, expired_shown=[one])  # fmt: skip
    reply = HandbookSyncReply(changed=1, failed=1, message="a.md: kapot", waiting=waiting)
    line = describe_sync(reply)
    assert line.startswith("handboek gesynchroniseerd: 1 bestand(en) bijgewerkt, 0 ongewijzigd, "
                           "1 mislukt. a.md: kapot; 7 relatie(s) wachten op onderwerpen die geen "
                           "bestand definieert: teamlead → verlof (rollen.md); ")  # fmt: skip
    assert "(rollen.md) …; 1 relatie(s) vervallen na 30 dagen wachten: teamlead → verlof" in line
    # Nothing new waits (reported by an earlier sync): nothing about it.
    quiet = HandbookSyncReply(changed=1, waiting=SyncWaiting(still_waiting=7, max_wait_days=30))
    assert describe_sync(quiet).endswith("0 mislukt")


def test_sync_line_names_the_skipped_files_in_dutch() -> None:
    shown = [f"handbook/img/{i}.png" for i in range(5)]
    reply = HandbookSyncReply(changed=1, unchanged=2, skipped=7, skipped_shown=shown)
    line = describe_sync(reply)
    assert line.startswith("handboek gesynchroniseerd: 1 bestand(en) bijgewerkt, 2 ongewijzigd")
    assert "7 overgeslagen (leeg, zonder tekst of een formaat dat R42 niet leest: " in line
    assert "handbook/img/4.png …)" in line and "unsupported" not in line
    assert "overgeslagen" not in describe_sync(HandbookSyncReply(changed=1))
