"""Real documents built by their own libraries, and the cases every entry point handles alike."""

from __future__ import annotations

import io
from dataclasses import dataclass

import docx
from fpdf import FPDF


def pdf_bytes(*pages: list[str], compress: bool = True) -> bytes:
    """A PDF with a text layer (one page per list of lines); no pages with text → a 'scan'."""
    pdf = FPDF()
    pdf.set_compression(compress)
    pdf.set_font("helvetica", size=12)
    for lines in pages:
        pdf.add_page()
        for line in lines:
            pdf.cell(0, 10, line, new_x="LMARGIN", new_y="NEXT")
    return bytes(pdf.output())


def docx_bytes() -> bytes:
    """A Word document with headings, a list and a table."""
    document = docx.Document()
    document.add_heading("Personeelsgids", level=1)
    document.add_paragraph("Welkom bij Respellion.")
    document.add_heading("Verlof", level=2)
    document.add_paragraph("Je hebt 27 vakantiedagen per jaar.")
    document.add_paragraph("Vraag verlof aan via HR.", style="List Bullet")
    table = document.add_table(rows=2, cols=2)
    table.cell(0, 0).text, table.cell(0, 1).text = "Rol", "Wie"
    table.cell(1, 0).text, table.cell(1, 1).text = "Teamlead", "Anna"
    out = io.BytesIO()
    document.save(out)
    return out.getvalue()


HTML = b"""<!doctype html><html><head><title>Handboek</title><style>p{color:red}</style>
<script>alert('x')</script></head><body><nav><a href="/">Home</a> | Menu</nav>
<main><h1>Reizen</h1><p>We vergoeden <b>23 cent</b> per kilometer.</p>
<h2>Reiskosten</h2><ul><li>Declareer binnen een maand</li><li>Met bonnetje</li></ul></main>
<footer>Copyright 2026</footer></body></html>"""


@dataclass(frozen=True)
class Case:
    """A file an entry point gets, and what its text (or its refusal) must show."""

    name: str
    data: bytes
    text: str = ""
    """A phrase of the document's own text the extracted topics must carry."""
    heading: str = ""
    """A topic id only a heading kept as structure produces."""
    error: str = ""
    """The phrase of the one clear refusal (English surfaces)."""
    error_nl: str = ""
    """The same refusal on the Dutch surfaces (Slack, Teams, the console)."""


RAW_SYNTAX = ("%PDF", "endobj", "<p>", "<main", "<script", "word/document.xml", "PK\x03\x04")


def readable_cases() -> list[Case]:
    """PDF, DOCX and HTML made by their libraries: each must arrive as its text."""
    return [
        Case("verlof.pdf", pdf_bytes(["Verlof", "Je hebt 27 vakantiedagen per jaar."]),
             text="27 vakantiedagen"),
        Case("gids.docx", docx_bytes(), text="27 vakantiedagen", heading="verlof"),
        Case("reizen.html", HTML, text="23 cent per kilometer", heading="reiskosten"),
    ]  # fmt: skip


def refused_cases() -> list[Case]:
    """A scan without text and a format R42 does not read: one clear message each."""
    return [
        Case("scan.pdf", pdf_bytes([], []), error="no text layer",
             error_nl="de PDF heeft geen tekstlaag"),
        Case("brief.rtf", rb"{\rtf1\ansi {\b Verlof} aanvragen}", error="unsupported format",
             error_nl="dit bestandsformaat kan R42 niet lezen; wel: "),
    ]  # fmt: skip


def all_cases() -> list[Case]:
    """Every case, readable first."""
    return [*readable_cases(), *refused_cases()]
