"""Uploads are checked before anything is stored: size, emptiness, binary data, encoding."""

from __future__ import annotations

from pathlib import Path

import pytest

from services.extractor.uploads import decode_upload, read_upload, register_upload, sha256_text
from shared.errors import BadInputError
from shared.store import Store


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"", "is empty"),
        (b" \n\t \n", "is empty"),
        (b"%PDF-1.7\n\x00\x01\x02binary", "not a readable PDF"),
        (b"\x00\x00caf\x00", "binary file"),
        (b"\x01\x02\x03\x04\x05\x06 control soup \x07\x08\x0e\x0f", "binary file"),
        (b"x" * 101, "the limit is 100 B"),
    ],
)
def test_bad_uploads_are_rejected_with_a_clear_reason(data: bytes, message: str) -> None:
    with pytest.raises(BadInputError, match=message):
        decode_upload(data, name="doc.md", max_bytes=100)


def test_good_text_is_decoded_and_normalised() -> None:
    text = decode_upload("\ufeff# Titel\r\nCafé\r\n".encode(), name="doc.md", max_bytes=100)
    assert text == "# Titel\nCafé\n"


def test_an_oversized_file_is_refused_without_reading_it(tmp_path: Path) -> None:
    path = tmp_path / "groot.md"
    with path.open("wb") as handle:
        handle.truncate(50 * 1024 * 1024)  # sparse: fast to make, huge to read
    with pytest.raises(BadInputError, match=r"50\.0 MB; the limit is 5\.0 MB"):
        read_upload(path, max_bytes=5 * 1024 * 1024)
    with pytest.raises(BadInputError, match="no such file"):
        read_upload(tmp_path / "missing.md", max_bytes=100)
    with pytest.raises(BadInputError, match="not a regular file"):
        read_upload(tmp_path, max_bytes=100)


async def test_register_stores_text_then_source_and_skips_completed_duplicates(
    store: Store,
) -> None:
    first = await register_upload(store, name="a.md", text="# A\n", uploaded_by="U1", actor="cli")
    assert first.source is not None and first.event is not None
    assert first.event.sha256 == sha256_text("# A\n") == first.source.sha256
    assert await store.source_texts.get(first.source.id) == "# A\n"
    # Pending (not completed) duplicates are registered again: the first may have failed.
    second = await register_upload(store, name="a.md", text="# A\n", uploaded_by="U1", actor="cli")
    assert not second.skipped
    await store.sources.set_status(first.source.id, "completed")
    third = await register_upload(store, name="a.md", text="# A\n", uploaded_by="U1", actor="cli")
    assert third.skipped and third.duplicate_of is not None
    assert third.duplicate_of.id == first.source.id
    other_name = await register_upload(
        store, name="b.md", text="# A\n", uploaded_by="U1", actor="cli"
    )
    assert not other_name.skipped
    assert len(await store.sources.list()) == 3
