"""Document formats: bytes + file name → text with structure (markdown headings), or a clear error.

One set of rules for every entry point (CLI, Slack, console, handbook sync): Markdown (front
matter stripped), plain text (UTF-8, UTF-16 with a BOM, Latin-1 with a warning), HTML (main
text), PDF (text layer) and DOCX (headings kept). Empty documents raise EmptyDocumentError,
which callers report as skipped rather than failed.
"""

from shared.formats.core import (
    SUPPORTED_SUFFIXES,
    Document,
    EmptyDocumentError,
    FormatError,
    is_supported,
    read_document,
    supported_list,
    unsupported,
)

__all__ = [
    "SUPPORTED_SUFFIXES",
    "Document",
    "EmptyDocumentError",
    "FormatError",
    "is_supported",
    "read_document",
    "supported_list",
    "unsupported",
]
