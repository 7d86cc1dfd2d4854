"""PDF (its text layer, through pypdf) and DOCX (paragraphs and tables, through python-docx)."""

from __future__ import annotations

import io
import logging
import zipfile

from shared.formats.core import FormatError

# A page with fewer characters than this is treated as having no text layer.
_MIN_TEXT_CHARS = 20
_HEADING_STYLES = {"title": 1, **{f"heading {n}": n for n in range(1, 10)}}


def pdf_text(data: bytes, *, name: str) -> str:
    """The text layer page by page; a scan without text or an encrypted file is an error."""
    from pypdf import PdfReader
    from pypdf.errors import PyPdfError

    logging.getLogger("pypdf").setLevel(logging.ERROR)  # its warnings are about layout only
    try:
        reader = PdfReader(io.BytesIO(data))
        if reader.is_encrypted:
            try:
                reader.decrypt("")  # an owner password only restricts printing and editing
            except Exception:
                pass
            if reader.is_encrypted and not _readable(reader):
                raise FormatError(f"{name} is a password-protected PDF; remove the password",
                                  kind="encrypted")  # fmt: skip
        pages = [page.extract_text() or "" for page in reader.pages]
    except FormatError:
        raise
    except (PyPdfError, ValueError, KeyError, TypeError, OSError, AssertionError) as exc:
        raise FormatError(f"{name} is not a readable PDF ({type(exc).__name__})") from None
    text = "\n\n".join(page.strip() for page in pages if page.strip())
    if len(text.strip()) < _MIN_TEXT_CHARS:
        raise FormatError(
            f"{name} has no text layer ({len(pages)} page(s) of images, probably a scan); "
            "run it through OCR or upload the original document",
            kind="no_text",
        )
    return text


def _readable(reader: object) -> bool:
    try:
        return bool(reader.pages[0].extract_text())  # type: ignore[attr-defined]
    except Exception:
        return False


def docx_text(data: bytes, *, name: str) -> str:
    """Paragraphs in order, headings as markdown headings, list items as bullets, tables as rows."""
    import docx
    from docx.table import Table
    from docx.text.paragraph import Paragraph

    try:
        document = docx.Document(io.BytesIO(data))
    except (zipfile.BadZipFile, KeyError, ValueError) as exc:
        raise FormatError(f"{name} is not a readable DOCX ({type(exc).__name__})") from None
    except Exception as exc:
        raise FormatError(f"{name} is not a readable DOCX ({type(exc).__name__})") from None
    lines: list[str] = []
    for block in document.iter_inner_content():
        if isinstance(block, Paragraph):
            lines.append(_paragraph(block))
        elif isinstance(block, Table):
            for row in block.rows:
                cells = list(dict.fromkeys(c.text.strip() for c in row.cells if c.text.strip()))
                if cells:
                    lines.append(" | ".join(cells))
    return "\n\n".join(line for line in lines if line)


def _paragraph(paragraph: object) -> str:
    text = str(getattr(paragraph, "text", "")).strip()
    if not text:
        return ""
    style = getattr(paragraph, "style", None)
    style_name = str(getattr(style, "name", "") or "").lower()
    level = _HEADING_STYLES.get(style_name)
    if level is not None:
        return "#" * level + " " + text
    if style_name.startswith("list"):
        return f"- {text}"
    return text
