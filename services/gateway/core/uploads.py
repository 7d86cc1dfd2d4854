"""Upload checks shared by every surface: the formats every entry point reads, in Dutch."""

from __future__ import annotations

from pathlib import Path

from services.gateway.core.text import number
from shared.errors import BadInputError
from shared.formats import EmptyDocumentError, FormatError, read_document

SUPPORTED_NL = "tekst, Markdown, HTML, PDF en DOCX"

_FORMAT_MESSAGES = {
    "unsupported": f"dit bestandsformaat kan R42 niet lezen; wel: {SUPPORTED_NL}",
    "binary": f"dit lijkt een binair bestand (bijv. een afbeelding); R42 leest {SUPPORTED_NL}",
    "encrypted": "het bestand is beveiligd met een wachtwoord; stuur een onbeveiligde versie",
    "no_text": "de PDF heeft geen tekstlaag (een scan?); stuur een PDF met tekst of een DOCX",
    "corrupt": "het bestand is beschadigd of niet wat de naam zegt; sla het opnieuw op",
}


def check_text(data: bytes, *, max_bytes: int, name: str = "bestand.txt") -> str:
    """The text of an upload in any supported format; BadInputError in Dutch otherwise."""
    if len(data) > max_bytes:
        raise BadInputError(
            f"het bestand is {number(len(data))} bytes; het maximum is {number(max_bytes)} bytes"
        )
    try:
        return read_document(data, name=name, max_bytes=max_bytes).text
    except EmptyDocumentError:
        raise BadInputError("het bestand is leeg: er staat geen tekst in") from None
    except FormatError as exc:
        raise BadInputError(_FORMAT_MESSAGES.get(exc.kind, _FORMAT_MESSAGES["corrupt"])) from None


def read_upload(arg: str, *, max_bytes: int) -> tuple[str, str]:
    """(file name, text) of a local file to ingest; BadInputError when missing or unreadable."""
    if not arg:
        raise BadInputError("gebruik: /ingest PAD")
    path = Path(arg).expanduser()
    if not path.is_file():
        raise BadInputError(f"{path} is geen bestand")
    if path.stat().st_size > max_bytes:
        raise BadInputError(f"{path.name} is groter dan het maximum van {number(max_bytes)} bytes")
    return path.name, check_text(path.read_bytes(), max_bytes=max_bytes, name=path.name)
