"""Source files in the JetStream object store bucket `r42-sources` (`text_ref` = object name).

Any NATS client with an uploader credential can put a file there and publish
`source.uploaded` naming it; R42's own CLI and surfaces do the same. The extractor reads the
object once, when it registers the source, checks its size and sha256, keeps the text with
the source and deletes the object. Object names are the uploader's own (a path, say).
"""

from __future__ import annotations

import base64
from typing import Any

from nats.errors import Error as NatsError
from nats.errors import NoRespondersError
from nats.errors import TimeoutError as NatsTimeoutError
from nats.js.errors import (
    BucketNotFoundError,
    NoStreamResponseError,
    NotFoundError,
    ObjectDeletedError,
    ObjectNotFoundError,
    ServiceUnavailableError,
)

from shared.bus.election import LEADERLESS_FOR_S, through_election
from shared.errors import BadInputError, BusError

SOURCES_BUCKET = "r42-sources"
"""The JetStream object store an uploader puts source files into."""

# What a clustered stream answers (or fails to) while it elects a leader after a node died.
_LEADERLESS = (NatsTimeoutError, NoStreamResponseError, NoRespondersError, ServiceUnavailableError)


async def read_source_object(connection: Any, name: str, *, max_bytes: int) -> bytes | None:
    """The bytes of object `name` in r42-sources; None when the bucket or object is missing.

    An object larger than `max_bytes` is refused (BadInputError) before it is downloaded.
    """
    js = connection.jetstream()
    try:
        bucket = await js.object_store(SOURCES_BUCKET)
        info = await bucket.get_info(name)
    except (BucketNotFoundError, ObjectNotFoundError, ObjectDeletedError, NotFoundError):
        return None
    except NatsError as exc:
        raise BusError(f"reading object {name!r} from {SOURCES_BUCKET}: {exc}") from exc
    if info.size is not None and info.size > max_bytes:
        raise BadInputError(
            f"object {name!r} is {info.size} bytes; the limit is {max_bytes} (R42_MAX_UPLOAD_BYTES)"
        )
    try:
        result = await bucket.get(name)
    except (ObjectNotFoundError, NotFoundError):
        return None
    except NatsError as exc:
        raise BusError(f"reading object {name!r} from {SOURCES_BUCKET}: {exc}") from exc
    data = result.data
    return bytes(data) if data is not None else b""


async def put_source_object(
    connection: Any, name: str, data: bytes, *, leaderless_for: float = LEADERLESS_FOR_S
) -> None:
    """Put a source file into r42-sources under `name` (replacing an object of that name).

    A timeout while the bucket's stream elects a new leader (a NATS node just died) is
    repeated for up to `leaderless_for` seconds before it is reported. Safe to repeat: each
    attempt writes its chunks under a fresh id, and the old object stays until the new meta
    entry replaces it.
    """
    js = connection.jetstream()

    async def put() -> None:
        bucket = await js.object_store(SOURCES_BUCKET)
        await bucket.put(name, data)

    try:
        await through_election(put, leaderless=_LEADERLESS, within=leaderless_for)
    except NatsError as exc:
        raise BusError(f"storing object {name!r} in {SOURCES_BUCKET}: {exc}") from exc


async def delete_source_object(connection: Any, name: str, *, sha256: str | None = None) -> bool:
    """Remove object `name` from r42-sources; False when it (or the bucket) is not there.

    With `sha256` (hex) only that content is removed: an uploader may have put a new file
    under the same name since.
    """
    js = connection.jetstream()
    try:
        bucket = await js.object_store(SOURCES_BUCKET)
        if sha256 is not None:
            info = await bucket.get_info(name)
            digest = base64.urlsafe_b64encode(bytes.fromhex(sha256)).decode()
            if info.digest != f"SHA-256={digest}":
                return False
        await bucket.delete(name)
    except (BucketNotFoundError, ObjectNotFoundError, ObjectDeletedError, NotFoundError):
        return False
    except NatsError as exc:
        raise BusError(f"deleting object {name!r} from {SOURCES_BUCKET}: {exc}") from exc
    return True
