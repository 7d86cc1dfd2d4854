"""Pure formatting of bus messages for `r42 events tail`: key fields, colours, masking."""

from __future__ import annotations

import itertools
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, tzinfo
from typing import Any

from rich.text import Text

from shared.errors import BadInputError

INTERNAL_PREFIXES = ("$", "_INBOX.", "_R_.")
ENVELOPE = frozenset({"event_id", "occurred_at", "schema_version", "correlation_id", "actor"})
TEXT_KEYS = frozenset(
    {"description", "text", "content", "body", "prompt", "answer", "message", "markdown",
     "learning_relevance", "question", "reply_to"}
)  # fmt: skip
STATUS_KEYS = frozenset(
    {"status", "state", "decision", "ok", "type", "content_type", "week", "kind", "reason",
     "name", "tier", "consumer", "original_subject"}
)  # fmt: skip
ERROR_KEYS = ("error", "error_msg", "error_message")
MAX_FIELDS = 12
MASK = "***"

_SECRET_PARTS = frozenset(
    {"token", "secret", "password", "passwd", "pwd", "apikey", "authorization", "auth",
     "cookie", "credential", "credentials", "signature", "jwt", "seed", "nkey"}
)  # fmt: skip
_SECRET_PAIRS = frozenset(
    {("api", "key"), ("private", "key"), ("access", "key"), ("secret", "key")}
)
_SECRET_VALUE_RE = re.compile(
    r"sk-ant-[\w-]+|xox[abposr]-[\w-]+|xapp-[\w-]+|gh[pousr]_\w{20,}|github_pat_\w+"
    r"|(?i:bearer)\s+[\w.~+/=-]+"
)


def is_internal(subject: str) -> bool:
    """Inboxes and server APIs ($JS, $KV, $SYS …): plumbing, not events."""
    return subject.startswith(INTERNAL_PREFIXES)


def is_consumer_delivery(reply: str | None) -> bool:
    """A JetStream consumer receiving a stored message (a copy, not a new event)."""
    # Deliveries keep the original subject but carry the consumer's ack subject as reply;
    # a `>` tail sees them because it also matches the consumer's inbox.
    return reply is not None and reply.startswith("$JS.ACK.")


def is_secret_key(key: str) -> bool:
    """Whether a field name says its value is a credential (`api_key`, `botToken` …)."""
    spaced = re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", key).lower()
    parts = [p for p in re.split(r"[^a-z0-9]+", spaced) if p]
    return any(p in _SECRET_PARTS for p in parts) or any(
        pair in _SECRET_PAIRS for pair in itertools.pairwise(parts)
    )


def mask_secrets(value: Any) -> Any:
    """A copy with credential fields and credential-looking strings replaced by ***."""
    if isinstance(value, dict):
        return {
            k: MASK if is_secret_key(str(k)) and v not in (None, "") else mask_secrets(v)
            for k, v in value.items()
        }
    if isinstance(value, list):
        return [mask_secrets(v) for v in value]
    if isinstance(value, str):
        return _SECRET_VALUE_RE.sub(MASK, value)
    return value


def check_filter(subject_filter: str) -> str:
    """Reject a malformed NATS subject filter before subscribing."""
    tokens = subject_filter.split(".")
    for i, token in enumerate(tokens):
        bad = (
            not token
            or any(c.isspace() for c in token)
            or (token == ">" and i != len(tokens) - 1)
            or (token not in ("*", ">") and ("*" in token or ">" in token))
        )
        if bad:
            raise BadInputError(
                f"invalid subject filter {subject_filter!r}: use dot-separated tokens, "
                "'*' for one token, '>' (last) for the rest — e.g. 'source.>'"
            )
    return subject_filter


@dataclass(frozen=True)
class EventView:
    """One received message, parsed and masked, ready to print."""

    subject: str
    received_at: datetime
    time: datetime
    event_id: str | None
    fields: tuple[tuple[str, str], ...]
    level: str
    payload: Any = None
    raw: str | None = None
    headers: dict[str, str] = field(default_factory=dict)


def _short(value: Any, limit: int = 60) -> str:
    text = str(value).replace("\n", " ")
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _llm_fields(rec: Mapping[str, Any]) -> list[tuple[str, str]]:
    fields = [(k, _short(rec[k])) for k in ("task", "model", "tier") if rec.get(k)]
    tokens = f"{rec.get('input_tokens', 0)}/{rec.get('output_tokens', 0)}"
    cache_w, cache_r = rec.get("cache_creation_input_tokens"), rec.get("cache_read_input_tokens")
    if cache_w or cache_r:
        tokens += f" cache w{cache_w or 0}/r{cache_r or 0}"
    fields.append(("tokens", tokens))
    if isinstance(rec.get("cost_usd"), int | float):
        fields.append(("cost", f"${rec['cost_usd']:.4f}"))
    if isinstance(rec.get("duration_ms"), int | float):
        fields.append(("ms", f"{rec['duration_ms']:.0f}"))
    fields.append(("ok", str(rec.get("ok"))))
    if rec.get("error_msg"):
        fields.append(("error", _short(rec["error_msg"], 120)))
    return fields


def key_fields(payload: Mapping[str, Any]) -> list[tuple[str, str]]:
    """The fields worth a glance: ids, status, counts, short strings, then errors."""
    record = payload.get("record")
    if isinstance(record, Mapping) and ("model" in record or "task" in record):
        return _llm_fields(record)
    buckets: list[list[tuple[str, str]]] = [[], [], [], [], []]
    for key, value in payload.items():
        if key in ENVELOPE or value is None or isinstance(value, Mapping):
            continue
        if key in ERROR_KEYS:
            if value not in ("", []):
                buckets[4].append(("error", _short(value, 120)))
        elif key == "id" or key.endswith(("_id", "_ref")):
            buckets[0].append((key, _short(value, 40)))
        elif isinstance(value, bool) or key in STATUS_KEYS:
            buckets[1].append((key, _short(value, 40)))
        elif isinstance(value, int | float):
            buckets[2].append((key, f"{value:g}" if isinstance(value, float) else str(value)))
        elif isinstance(value, list):
            buckets[2].append((key, str(len(value))))
        elif isinstance(value, str) and key not in TEXT_KEYS:
            buckets[3].append((key, _short(value, 40)))
    corr, event_id = payload.get("correlation_id"), payload.get("event_id")
    if corr and corr != event_id:
        buckets[0].append(("corr", _short(corr, 8).rstrip("…")))
    if payload.get("actor"):
        buckets[3].append(("by", _short(payload["actor"], 40)))
    flat = [f for bucket in buckets[:4] for f in bucket][: MAX_FIELDS - len(buckets[4])]
    return flat + buckets[4]


def _level(subject: str, payload: Any) -> str:
    if isinstance(payload, Mapping):
        record = payload.get("record")
        body = record if isinstance(record, Mapping) else payload
        if body.get("ok") is False or any(body.get(k) for k in ERROR_KEYS):
            return "error"
        if isinstance(record, Mapping):
            return "llm"
    if subject.endswith(".failed") or subject.startswith("failed."):
        return "error"
    if subject.endswith((".completed", ".ready", ".updated")):
        return "ok"
    return "progress" if subject.endswith(".progress") else "info"


def _parse_time(value: Any, default: datetime) -> datetime:
    if isinstance(value, str):
        try:
            parsed = datetime.fromisoformat(value)
        except ValueError:
            return default
        return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)
    return default


def parse_message(
    subject: str, data: bytes, *, headers: Mapping[str, str] | None, received_at: datetime
) -> EventView:
    """Turn a raw NATS message into a masked EventView (pure: no I/O)."""
    safe_headers = mask_secrets(dict(headers or {}))
    try:
        payload: Any = mask_secrets(json.loads(data)) if data else None
        raw = None
    except (ValueError, UnicodeDecodeError):
        payload, raw = None, mask_secrets(data[:2000].decode(errors="replace"))
    if isinstance(payload, dict):
        fields = tuple(key_fields(payload))
        event_id = payload.get("event_id") or safe_headers.get("Nats-Msg-Id")
        when = _parse_time(payload.get("occurred_at"), received_at)
    else:
        shown = "empty" if not data else ("not JSON" if raw is not None else type(payload).__name__)
        fields = (("bytes", str(len(data))), ("payload", shown))
        event_id, when = safe_headers.get("Nats-Msg-Id"), received_at
    return EventView(
        subject=subject, received_at=received_at, time=when,
        event_id=str(event_id) if event_id else None, fields=fields,
        level=_level(subject, payload), payload=payload, raw=raw, headers=safe_headers,
    )  # fmt: skip


_STYLES = {"error": "bold red", "ok": "green", "llm": "magenta", "progress": "cyan", "info": ""}


def render_line(view: EventView, *, tz: tzinfo | None = None) -> Text:
    """`HH:MM:SS.mmm  subject  id  key=value …` as rich Text (colour only on a terminal)."""
    stamp = view.time.astimezone(tz).strftime("%H:%M:%S.%f")[:-3]
    line = Text.assemble(
        (stamp, "dim"), "  ", (f"{view.subject:<20}", _STYLES.get(view.level, "")), "  ",
        ((view.event_id or "-")[:8].ljust(8), "dim"),
    )  # fmt: skip
    for i, (key, value) in enumerate(view.fields):
        line.append(" " if i else "  ")
        line.append(f"{key}=", style="dim")
        line.append(value, style="red" if key == "error" else "")
    return line


def render_json(view: EventView) -> str:
    """One JSON line: subject, times, event id, headers and the full (masked) payload."""
    doc: dict[str, Any] = {
        "subject": view.subject,
        "received_at": view.received_at.isoformat(),
        "event_id": view.event_id,
        "payload": view.payload,
    }
    if view.headers:
        doc["headers"] = view.headers
    if view.raw is not None:
        doc["raw"] = view.raw
    return json.dumps(doc, ensure_ascii=False, default=str)
