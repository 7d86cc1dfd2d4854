"""Checking and registering a source before extraction: one place for every uploader."""

from __future__ import annotations

import hashlib
import uuid
from dataclasses import dataclass
from pathlib import Path

from services.extractor.objects import SourceObjects
from services.extractor.outcomes import Publish
from services.extractor.ports import ExtractorStore
from shared.bus import SourceUploaded, derived_event_id
from shared.bus.extractor_rpc import RegisterUploadReply, RegisterUploadRequest
from shared.errors import BadInputError
from shared.formats import SUPPORTED_SUFFIXES, Document, read_document
from shared.formats.core import human_size
from shared.store import Source

# Re-exported: the CLI and the sync read with the same rules as every other entry point.
TEXT_SUFFIXES = SUPPORTED_SUFFIXES


def decode_upload(data: bytes, *, name: str, max_bytes: int) -> str:
    """The text of an upload (any supported format), or BadInputError with the reason.

    An empty document raises EmptyDocumentError (a BadInputError) so callers can skip it.
    """
    return normalise_text(read_document(data, name=name, max_bytes=max_bytes).text)


def load_document(path: Path, *, max_bytes: int, name: str | None = None) -> Document:
    """Read and check a local file without loading more than the size limit."""
    return load_file(path, max_bytes=max_bytes, name=name)[1]


def load_file(path: Path, *, max_bytes: int, name: str | None = None) -> tuple[bytes, Document]:
    """A local file's bytes and its checked document (never more than the size limit read)."""
    if not path.exists():
        raise BadInputError(f"{path}: no such file")
    if not path.is_file():
        raise BadInputError(f"{path}: not a regular file")
    try:
        size = path.stat().st_size
        if size > max_bytes:
            raise BadInputError(
                f"{path} is {human_size(size)}; the limit is {human_size(max_bytes)} "
                "(R42_MAX_UPLOAD_BYTES)"
            )
        with path.open("rb") as handle:
            data = handle.read(max_bytes + 1)
    except OSError as exc:
        raise BadInputError(f"{path}: cannot read it ({exc.strerror})") from None
    return data, read_document(data, name=name or str(path), max_bytes=max_bytes)


def read_upload(path: Path, *, max_bytes: int) -> str:
    """The text of a local file (any supported format), checked like every other upload."""
    return load_document(path, max_bytes=max_bytes).text


def normalise_text(text: str) -> str:
    """The form a source is stored and hashed in (CRLF and CR line ends become LF)."""
    return text.replace("\r\n", "\n").replace("\r", "\n")


def sha256_text(text: str) -> str:
    """The content hash a source is identified by."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def new_source_id() -> str:
    """A fresh source id."""
    return f"src-{uuid.uuid4().hex[:16]}"


@dataclass(frozen=True)
class Registration:
    """A registered source and its upload event, or the completed source it duplicates."""

    source: Source | None
    event: SourceUploaded | None
    duplicate_of: Source | None = None

    @property
    def skipped(self) -> bool:
        """Whether the same name and content were already extracted (nothing was stored)."""
        return self.duplicate_of is not None


async def completed_duplicate(
    store: ExtractorStore, *, name: str, sha256: str, exclude: str = ""
) -> Source | None:
    """A completed source with the same name and content, if there is one."""
    for other in await store.sources.find_by_sha256(sha256):
        if other.id != exclude and other.name == name and other.status == "completed":
            return other
    return None


async def register_upload(
    store: ExtractorStore,
    *,
    name: str,
    text: str,
    uploaded_by: str,
    actor: str,
    source_id: str | None = None,
    text_ref: str | None = None,
) -> Registration:
    """Store the source and its text (status pending) and build its source.uploaded event.

    A source with the same name and sha256 that already completed is not stored again:
    the result says which one it duplicates. `text_ref` names the object the text was read
    from (a staged upload); the extractor registers it here, so the event's readers never
    read that object again.
    """
    if not name.strip():
        raise BadInputError("a source needs a name")
    text = normalise_text(text)
    if not text.strip():
        raise BadInputError(f"{name} is empty: there is no text to extract")
    digest = sha256_text(text)
    duplicate = await completed_duplicate(store, name=name, sha256=digest)
    if duplicate is not None:
        return Registration(source=None, event=None, duplicate_of=duplicate)
    source_id = source_id or new_source_id()
    # Text first: a source row never points at missing text.
    await store.source_texts.put(source_id, text)
    source = await store.sources.create(
        Source(id=source_id, name=name, sha256=digest, who=uploaded_by)
    )
    event = SourceUploaded(
        # Derived from the source: re-publishing after a crash is deduplicated by JetStream.
        event_id=derived_event_id(SourceUploaded.SUBJECT, source_id),
        actor=actor,
        source_id=source_id,
        name=name,
        sha256=digest,
        text_ref=text_ref or source_id,
        size=len(text.encode("utf-8")),
        uploaded_by=uploaded_by,
    )
    return Registration(source=source, event=event)


async def register_staged(
    store: ExtractorStore, request: RegisterUploadRequest, *, objects: SourceObjects | None,
    max_bytes: int, publish: Publish,
) -> RegisterUploadReply:  # fmt: skip
    """rpc.extractor.register_upload: register a staged object, announce it, drop the object."""
    data = await objects.read(request.text_ref) if objects is not None else None
    if data is None:
        raise BadInputError(
            f"no object {request.text_ref!r} in the r42-sources bucket (put the text there first)"
        )
    # Staged objects are text already (a surface extracted a PDF, or it was pasted without a
    # file name): read them as markdown whatever the source is called.
    text = decode_upload(data, name=f"{request.name}.md", max_bytes=max_bytes)
    registration = await register_upload(
        store, name=request.name, text=text, uploaded_by=request.uploaded_by,
        actor=request.uploaded_by, text_ref=request.text_ref,
    )  # fmt: skip
    if registration.event is not None:
        await publish(registration.event)
    if objects is not None:
        await objects.drop(request.text_ref)  # the store holds the text now
    if registration.duplicate_of is not None:
        found = registration.duplicate_of
        return RegisterUploadReply(source_id=found.id, name=found.name, duplicate=True)
    source = registration.source
    if source is None:  # register_upload returns a source or the duplicate it found
        raise BadInputError(f"{request.name} was not registered")
    return RegisterUploadReply(source_id=source.id, name=source.name)
