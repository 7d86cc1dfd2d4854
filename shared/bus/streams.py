"""JetStream stream definitions (one per domain) and idempotent `ensure_streams`."""

from __future__ import annotations

import logging
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Literal

from nats.errors import Error as NatsError
from nats.js import JetStreamContext
from nats.js.api import DiscardPolicy, RetentionPolicy, StorageType, StreamConfig
from nats.js.errors import BadRequestError, NotFoundError

from shared.bus.subjects import (
    FAILED_PREFIX,
    check_stream_subject,
    ns_stream,
    ns_subject,
    subjects_overlap,
    validate_namespace,
)
from shared.errors import BadInputError, BusError, ConfigError

log = logging.getLogger(__name__)

DAY = 24 * 3600.0
MIB = 1024 * 1024
DUPLICATE_WINDOW_S = 120.0
"""Re-publishes with the same Nats-Msg-Id inside this window are stored once."""

StreamAction = Literal["created", "updated", "unchanged"]


@dataclass(frozen=True)
class StreamSpec:
    """One stream: a name, its subject filters and limits; validated when defined."""

    name: str
    subjects: tuple[str, ...]
    description: str = ""
    max_age_s: float = 7 * DAY
    max_bytes: int = 1024 * MIB
    max_msg_size: int = 1 * MIB
    duplicate_window_s: float = DUPLICATE_WINDOW_S
    storage: StorageType = StorageType.FILE
    discard: DiscardPolicy = field(default=DiscardPolicy.OLD)

    def __post_init__(self) -> None:
        if not self.name or not self.name.replace("_", "").replace("-", "").isalnum():
            raise ConfigError(f"stream name {self.name!r} must be letters, digits, '_' or '-'")
        if not self.subjects:
            raise ConfigError(f"stream {self.name} has no subjects")
        for subject in self.subjects:
            check_stream_subject(subject)
        if self.duplicate_window_s > self.max_age_s:
            raise ConfigError(f"stream {self.name}: duplicate window exceeds max age")

    def config(self, *, namespace: str = "", replicas: int = 1) -> StreamConfig:
        """The nats-py StreamConfig for a namespace (wire subjects re-checked against rpc.)."""
        subjects = [check_stream_subject(ns_subject(s, namespace)) for s in self.subjects]
        return StreamConfig(
            name=ns_stream(self.name, namespace),
            description=self.description or None,
            subjects=subjects,
            retention=RetentionPolicy.LIMITS,
            max_age=self.max_age_s,
            max_bytes=self.max_bytes,
            max_msg_size=self.max_msg_size,
            max_msgs=-1,
            storage=self.storage,
            discard=self.discard,
            num_replicas=replicas,
            duplicate_window=self.duplicate_window_s,
        )


def _validate_streams(specs: Iterable[StreamSpec]) -> tuple[StreamSpec, ...]:
    specs = tuple(specs)
    names = [s.name for s in specs]
    if len(set(names)) != len(names):
        raise ConfigError(f"duplicate stream names in {names}")
    flat = [(spec.name, subj) for spec in specs for subj in spec.subjects]
    for i, (name_a, a) in enumerate(flat):
        for name_b, b in flat[i + 1 :]:
            if subjects_overlap(a, b):
                raise ConfigError(f"streams {name_a} ({a}) and {name_b} ({b}) overlap")
    return specs


# Limits retention (not work-queue): several services consume the same subject through
# their own durable consumers (kb.updated → r42, content, quiz).
STREAMS: tuple[StreamSpec, ...] = _validate_streams(
    (
        StreamSpec("SOURCES", ("source.>",), "Source lifecycle: upload, cancel, progress, outcome"),
        StreamSpec("CHUNKS", ("chunk.>",), "Per-chunk extraction results", max_age_s=3 * DAY),
        StreamSpec("KB", ("kb.>",), "Knowledge-graph changes and decisions", max_age_s=30 * DAY),
        StreamSpec("CONTENT", ("content.>",), "Content requests and results"),
        StreamSpec("QUIZ", ("quiz.>",), "Quiz requests, starts and answers"),
        StreamSpec("LLM", ("llm.>",), "LLM call telemetry", max_bytes=512 * MIB),
        StreamSpec("FAILED", (f"{FAILED_PREFIX}>",), "Dead letters", max_age_s=30 * DAY),
    )
)


def stream_for_subject(subject: str, *, streams: Iterable[StreamSpec] = STREAMS) -> StreamSpec:
    """The stream that captures a logical subject; raise if none does."""
    for spec in streams:
        if any(subjects_overlap(subject, s) for s in spec.subjects):
            return spec
    raise BadInputError(f"no stream captures subject {subject!r}")


def _differs(current: StreamConfig, wanted: StreamConfig) -> list[str]:
    changed = []
    for name in ("subjects", "max_age", "max_bytes", "max_msg_size", "max_msgs", "discard",
                 "duplicate_window", "num_replicas", "description"):  # fmt: skip
        have, want = getattr(current, name), getattr(wanted, name)
        if name == "subjects":
            have, want = sorted(have or []), sorted(want or [])
        elif name in ("max_age", "duplicate_window"):
            # The server reports nanoseconds; nats-py converts back to float seconds.
            have, want = round(have or 0.0, 3), round(want or 0.0, 3)
        if have != want:
            changed.append(name)
    return changed


async def ensure_streams(
    js: JetStreamContext,
    *,
    namespace: str = "",
    replicas: int = 1,
    streams: Iterable[StreamSpec] = STREAMS,
) -> dict[str, StreamAction]:
    """Create missing streams and update drifted ones; safe to call on every start."""
    validate_namespace(namespace)
    if replicas < 1:
        raise ConfigError("stream replicas must be >= 1")
    specs = _validate_streams(streams)
    result: dict[str, StreamAction] = {}
    for spec in specs:
        wanted = spec.config(namespace=namespace, replicas=replicas)
        name = str(wanted.name)
        try:
            try:
                info = await js.stream_info(name)
            except NotFoundError:
                await js.add_stream(wanted)
                result[name] = "created"
                log.info("created stream %s (%s)", name, ", ".join(wanted.subjects or []))
                continue
            if info.config.storage != wanted.storage:
                raise ConfigError(
                    f"stream {name} exists with storage {info.config.storage}; storage "
                    "cannot change in place (delete the stream or migrate it)"
                )
            changed = _differs(info.config, wanted)
            if not changed:
                result[name] = "unchanged"
                continue
            await js.update_stream(wanted)
            result[name] = "updated"
            log.info("updated stream %s: %s", name, ", ".join(changed))
        except BadRequestError as exc:
            raise ConfigError(f"stream {name} rejected by the server: {exc.description}") from exc
        except (NatsError, TimeoutError, OSError) as exc:
            raise BusError(f"could not reach JetStream to set up stream {name}: {exc}") from exc
    return result
