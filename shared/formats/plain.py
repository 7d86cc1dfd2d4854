"""Plain text and Markdown: decoding (UTF-8, UTF-16 with BOM, Latin-1), front matter."""

from __future__ import annotations

import codecs
import re

import yaml

from shared.formats.core import FormatError

# Text files carry few control characters; more than this share means binary data.
_MAX_CONTROL_SHARE = 0.05
_ALLOWED_CONTROLS = frozenset("\t\n\r\f\v")
_FRONT_MATTER_RE = re.compile(r"\A---[ \t]*\r?\n(.*?)\r?\n---[ \t]*(?:\r?\n|\Z)", re.DOTALL)
_TOPIC_TYPES = ("concept", "role", "process")
_BOMS = ((codecs.BOM_UTF8, "utf-8-sig"), (codecs.BOM_UTF16_LE, "utf-16"),
         (codecs.BOM_UTF16_BE, "utf-16"))  # fmt: skip


def decode_text(data: bytes, *, name: str) -> tuple[str, str | None]:
    """(text, warning): UTF-8 or a BOM's encoding; Latin-1 with a warning; binary refused."""
    for bom, encoding in _BOMS:
        if data.startswith(bom):
            try:
                return _checked(data.decode(encoding), name=name), None
            except UnicodeDecodeError:
                raise FormatError(f"{name} has a {encoding} byte-order mark but is not "
                                  f"valid {encoding} text") from None  # fmt: skip
    if b"\x00" in data:
        raise FormatError(f"{name} is a binary file (it contains NUL bytes); supported: text, "
                          "Markdown, HTML, PDF, DOCX", kind="binary")  # fmt: skip
    try:
        return _checked(data.decode("utf-8"), name=name), None
    except UnicodeDecodeError as exc:
        note = (f"{name} is not UTF-8 (byte 0x{data[exc.start]:02x} at offset {exc.start}); "
                "read it as Latin-1")  # fmt: skip
    return _checked(data.decode("latin-1"), name=name), note


def _checked(text: str, *, name: str) -> str:
    controls = sum(1 for ch in text if ord(ch) < 32 and ch not in _ALLOWED_CONTROLS)
    if controls > _MAX_CONTROL_SHARE * max(len(text), 1):
        raise FormatError(f"{name} looks like a binary file (control characters); "
                          "supported: text, Markdown, HTML, PDF, DOCX", kind="binary")  # fmt: skip
    return text


def strip_front_matter(text: str) -> str:
    """Markdown without its YAML front matter; a title becomes the heading, a type is kept.

    The topic type (`type: role`) is the one field extraction reads; every other key
    (layout, permalink, tags…) is site configuration and would only add noise.
    """
    match = _FRONT_MATTER_RE.match(text)
    if not match:
        return text
    try:
        meta = yaml.safe_load(match.group(1))
    except yaml.YAMLError:
        meta = None
    body = text[match.end() :]
    if not isinstance(meta, dict):
        return body
    head = ""
    kind = str(meta.get("type", "")).strip().lower()
    if kind in _TOPIC_TYPES:
        head = f"---\ntype: {kind}\n---\n"
    title = meta.get("title")
    if isinstance(title, str) and title.strip() and not re.search(r"^# ", body, re.MULTILINE):
        head += f"# {title.strip()}\n\n"
    return head + body


def tidy(text: str) -> str:
    """Unix newlines, no trailing spaces, at most one blank line in a row."""
    text = text.replace("\r\n", "\n").replace("\r", "\n").replace("\x00", "")
    lines = [line.rstrip() for line in text.split("\n")]
    out: list[str] = []
    for line in lines:
        if not line and (not out or not out[-1]):
            continue
        out.append(line)
    return "\n".join(out).strip("\n") + "\n" if out else ""
