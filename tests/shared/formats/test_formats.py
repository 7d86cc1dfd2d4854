"""One set of format rules: real PDF, DOCX and HTML files built with their own libraries."""

from __future__ import annotations

import io
import zipfile

import pytest

from shared.errors import BadInputError
from shared.formats import (
    EmptyDocumentError,
    FormatError,
    is_supported,
    read_document,
)
from tests.shared.formats.documents import docx_bytes, pdf_bytes

LIMIT = 5 * 1024 * 1024


def test_markdown_front_matter_is_stripped_but_title_and_type_are_kept() -> None:
    data = (
        b"---\ntitle: Rollen\ntype: role\nlayout: page\npermalink: /rollen/\n---\n"
        b"## Teamlead\nKeurt verlof goed.\n"
    )
    doc = read_document(data, name="rollen.md", max_bytes=LIMIT)
    assert doc.format == "markdown"
    assert doc.text == "---\ntype: role\n---\n# Rollen\n\n## Teamlead\nKeurt verlof goed.\n"
    assert "layout" not in doc.text and "permalink" not in doc.text


def test_plain_text_encodings() -> None:
    utf16 = "# Verlof\nCafé en crème\n".encode("utf-16")  # with its BOM
    assert read_document(utf16, name="a.txt", max_bytes=LIMIT).text == "# Verlof\nCafé en crème\n"
    be = "\ufeffHallo wereld".encode("utf-16-be")
    assert read_document(be, name="a.txt", max_bytes=LIMIT).text == "Hallo wereld\n"
    latin = read_document("Café au lait\r\n".encode("latin-1"), name="a.txt", max_bytes=LIMIT)
    assert latin.text == "Café au lait\n"
    assert latin.warnings and "not UTF-8" in latin.warnings[0] and "Latin-1" in latin.warnings[0]
    with pytest.raises(FormatError, match="binary file"):
        read_document(b"abc\x00def\x00", name="a.txt", max_bytes=LIMIT)


def test_html_main_text_with_headings_and_no_page_furniture() -> None:
    html = b"""<!doctype html><html><head><title>Handboek</title><style>p{color:red}</style>
    <script>alert('x')</script></head><body><nav><a href="/">Home</a> | Menu</nav>
    <main><h1>Verlof</h1><p>Je hebt <b>27</b> vakantiedagen.</p>
    <h2>Ouderschapsverlof</h2><ul><li>Tot acht jaar</li><li>Betaald</li></ul></main>
    <footer>Copyright 2026</footer></body></html>"""
    doc = read_document(html, name="verlof.html", max_bytes=LIMIT)
    assert doc.format == "html"
    assert doc.text == (
        "# Verlof\n\nJe hebt 27 vakantiedagen.\n\n## Ouderschapsverlof\n\n"
        "- Tot acht jaar\n\n- Betaald\n"
    )
    # An HTML page saved as .txt is read as HTML, not ingested as raw markup.
    assert read_document(html, name="verlof.txt", max_bytes=LIMIT).text == doc.text


def test_pdf_text_layer_compressed_and_uncompressed() -> None:
    data = pdf_bytes(["Verlofregeling", "Je hebt 27 vakantiedagen per jaar."], ["Pagina twee."])
    doc = read_document(data, name="verlof.pdf", max_bytes=LIMIT)
    assert doc.format == "pdf"
    assert "27 vakantiedagen" in doc.text and "Pagina twee." in doc.text
    raw = pdf_bytes(["Ongecomprimeerde tekst in een PDF."], compress=False)
    assert b"%PDF-1." in raw[:10]
    # Named .md, still a PDF: its text is read, never its raw syntax.
    misnamed = read_document(raw, name="notes.md", max_bytes=LIMIT)
    assert misnamed.format == "pdf" and "%PDF" not in misnamed.text
    assert "Ongecomprimeerde tekst" in misnamed.text


def test_pdf_without_text_layer_or_broken_is_a_clear_error() -> None:
    with pytest.raises(FormatError, match=r"no text layer.*OCR") as caught:
        read_document(pdf_bytes([], []), name="scan.pdf", max_bytes=LIMIT)
    assert caught.value.kind == "no_text"
    with pytest.raises(FormatError, match="not a readable PDF"):
        read_document(b"%PDF-1.7\n\x00\x01\x02 broken", name="kapot.pdf", max_bytes=LIMIT)
    with pytest.raises(FormatError, match="not a valid PDF"):
        read_document(b"just text", name="nep.pdf", max_bytes=LIMIT)


def test_docx_headings_lists_and_tables() -> None:
    doc = read_document(docx_bytes(), name="gids.docx", max_bytes=LIMIT)
    assert doc.format == "docx"
    assert doc.text == (
        "# Personeelsgids\n\nWelkom bij Respellion.\n\n## Verlof\n\n"
        "Je hebt 27 vakantiedagen per jaar.\n\n- Vraag verlof aan via HR.\n\n"
        "Rol | Wie\n\nTeamlead | Anna\n"
    )
    broken = io.BytesIO()
    with zipfile.ZipFile(broken, "w") as archive:
        archive.writestr("word/other.xml", "<x/>")
    with pytest.raises(FormatError, match="not a readable DOCX"):
        read_document(broken.getvalue(), name="kapot.docx", max_bytes=LIMIT)


def test_unsupported_formats_name_what_is_supported() -> None:
    with pytest.raises(FormatError, match=r"unsupported format RTF; supported: \.md") as caught:
        read_document(rb"{\rtf1\ansi Hallo}", name="brief.rtf", max_bytes=LIMIT)
    assert caught.value.kind == "unsupported"
    with pytest.raises(FormatError, match=r"unsupported format \.xlsx; supported: .*\.docx"):
        read_document(b"a,b", name="cijfers.xlsx", max_bytes=LIMIT)
    with pytest.raises(FormatError, match="binary file"):
        read_document(b"\x89PNG\r\n\x1a\n\x00\x00", name="logo.md", max_bytes=LIMIT)
    assert is_supported("a/B.HTML") and is_supported("x.docx") and not is_supported("x.png")


@pytest.mark.parametrize(
    ("data", "name"),
    [
        (b"", "leeg.md"),
        (b" \n\t\n", "leeg.txt"),
        (b"---\ntitle:\n---\n\n", "alleen-front-matter.md"),
        (b"<html><body><script>x()</script></body></html>", "leeg.html"),
    ],
)
def test_empty_documents_raise_the_skippable_error(data: bytes, name: str) -> None:
    with pytest.raises(EmptyDocumentError, match="is empty"):
        read_document(data, name=name, max_bytes=LIMIT)


def test_size_limit_is_checked_first() -> None:
    with pytest.raises(BadInputError, match="the limit is 100 B"):
        read_document(b"x" * 101, name="groot.md", max_bytes=100)
