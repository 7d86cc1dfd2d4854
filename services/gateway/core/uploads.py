"""Upload checks shared by Slack and the console: size, UTF-8, not binary."""

from __future__ import annotations

from pathlib import Path

from services.gateway.core.text import number
from shared.errors import BadInputError


def check_text(data: bytes, *, max_bytes: int) -> str:
    """Upload bytes as text: within the size limit, UTF-8, not binary; BadInputError otherwise."""
    if len(data) > max_bytes:
        raise BadInputError(
            f"het bestand is {number(len(data))} bytes; het maximum is {number(max_bytes)} bytes"
        )
    if b"\x00" in data:
        raise BadInputError("dit lijkt een binair bestand; alleen tekst en markdown kunnen")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise BadInputError("het bestand is geen UTF-8-tekst; sla het op als UTF-8") from None
    controls = sum(1 for ch in text if ord(ch) < 32 and ch not in "\n\r\t\f")
    if controls > max(8, len(text) // 100):
        raise BadInputError("dit lijkt een binair bestand; alleen tekst en markdown kunnen")
    if not text.strip():
        raise BadInputError("het bestand is leeg")
    return text


def read_upload(arg: str, *, max_bytes: int) -> tuple[str, str]:
    """(file name, text) of a local file to ingest; BadInputError when missing, big or binary."""
    if not arg:
        raise BadInputError("gebruik: /ingest PAD")
    path = Path(arg).expanduser()
    if not path.is_file():
        raise BadInputError(f"{path} is geen bestand")
    if path.stat().st_size > max_bytes:
        raise BadInputError(f"{path.name} is groter dan het maximum van {number(max_bytes)} bytes")
    return path.name, check_text(path.read_bytes(), max_bytes=max_bytes)
