"""Dispatch on the format (content signature first, then the file name) and shared checks."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import PurePosixPath

from shared.errors import BadInputError

SUFFIX_FORMATS: dict[str, str] = {
    ".md": "markdown",
    ".markdown": "markdown",
    ".txt": "text",
    ".text": "text",
    ".html": "html",
    ".htm": "html",
    ".pdf": "pdf",
    ".docx": "docx",
}
SUPPORTED_SUFFIXES = tuple(SUFFIX_FORMATS)


class FormatError(BadInputError):
    """The bytes are not a document R42 can read (unsupported, corrupt, binary, no text).

    `kind` says which, for surfaces that word the message themselves (Slack is Dutch):
    unsupported, binary, corrupt, encrypted, no_text.
    """

    def __init__(self, message: str, *, kind: str = "corrupt") -> None:
        super().__init__(message)
        self.kind = kind


class EmptyDocumentError(BadInputError):
    """The document holds no text: callers skip it with a notice, it is not a failure."""


@dataclass(frozen=True)
class Document:
    """A readable document: its text (markdown structure where the format has it)."""

    name: str
    format: str
    text: str
    warnings: tuple[str, ...] = ()


def supported_list() -> str:
    """The supported suffixes for messages: ".md, .markdown, …"."""
    return ", ".join(SUPPORTED_SUFFIXES)


def suffix_of(name: str) -> str:
    """The lower-case suffix of a file name or path ("" when it has none)."""
    return PurePosixPath(name.replace("\\", "/")).suffix.lower()


def unsupported(name: str) -> str:
    """The one message for a file R42 does not read: 'unsupported format .png; supported: …'."""
    return (
        f"unsupported format {suffix_of(name) or 'without a suffix'}; supported: {supported_list()}"
    )


def is_supported(name: str) -> bool:
    """Whether a file name has a suffix R42 reads."""
    return suffix_of(name) in SUFFIX_FORMATS


def human_size(size: int) -> str:
    """A byte count for people: 512 B, 3.1 KB, 5.0 MB."""
    if size < 1024:
        return f"{size} B"
    if size < 1024 * 1024:
        return f"{size / 1024:.1f} KB"
    return f"{size / (1024 * 1024):.1f} MB"


def sniff(data: bytes) -> str | None:
    """The format a content signature proves, whatever the name says."""
    head = data[:1024].lstrip()
    if head.startswith(b"%PDF-"):
        return "pdf"
    if data.startswith(b"PK\x03\x04"):
        return "zip"
    if head.startswith(b"{\\rtf"):
        return "rtf"
    if data.startswith((b"\xd0\xcf\x11\xe0", b"\x89PNG", b"\xff\xd8\xff", b"GIF8")):
        return "binary"
    return None


def detect_format(data: bytes, name: str) -> str:
    """The reader to use; FormatError for anything R42 does not read."""
    suffix = suffix_of(name)
    sniffed = sniff(data)
    if sniffed == "pdf":
        return "pdf"
    if sniffed == "zip":
        if suffix == ".docx" or b"word/document.xml" in data[:65536] or b"word/" in data:
            return "docx"
        raise FormatError(f"{name}: unsupported format (a ZIP archive); supported: "
                          f"{supported_list()}", kind="unsupported")  # fmt: skip
    if sniffed == "rtf":
        raise FormatError(f"{name}: unsupported format RTF; supported: {supported_list()} "
                          "(save it as DOCX or PDF)", kind="unsupported")  # fmt: skip
    if suffix in (".pdf", ".docx") and sniffed is None:
        raise FormatError(f"{name} is not a valid {suffix[1:].upper()} file")
    if sniffed == "binary" and suffix not in (".pdf", ".docx"):
        raise FormatError(f"{name} is a binary file (an image or an old Office document); "
                          f"supported: {supported_list()}", kind="binary")  # fmt: skip
    if suffix in SUFFIX_FORMATS:
        return SUFFIX_FORMATS[suffix]
    raise FormatError(f"{name}: {unsupported(name)}", kind="unsupported")


def read_document(data: bytes, *, name: str, max_bytes: int) -> Document:
    """The document in `data`: FormatError when unreadable, EmptyDocumentError when empty."""
    from shared.formats import binary, markup, plain

    if len(data) > max_bytes:
        raise BadInputError(
            f"{name} is {human_size(len(data))}; the limit is {human_size(max_bytes)} "
            "(R42_MAX_UPLOAD_BYTES)"
        )
    if not data.strip():
        raise EmptyDocumentError(f"{name} is empty: there is no text to extract")
    kind = detect_format(data, name)
    warnings: list[str] = []
    if kind == "pdf":
        text = binary.pdf_text(data, name=name)
    elif kind == "docx":
        text = binary.docx_text(data, name=name)
    else:
        decoded, note = plain.decode_text(data, name=name)
        if note:
            warnings.append(note)
        if kind == "html" or (kind == "text" and markup.looks_like_html(decoded)):
            kind, text = "html", markup.html_text(decoded)
        elif kind == "markdown":
            text = plain.strip_front_matter(decoded)
        else:
            text = decoded
    text = plain.tidy(text)
    if not text.strip():
        raise EmptyDocumentError(f"{name} is empty: there is no text to extract")
    return Document(name=name, format=kind, text=text, warnings=tuple(warnings))
