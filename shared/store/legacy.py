"""Where the old `settings` rows go: one plan, carried out by each adapter's migration.

Until version 6 the services kept their state as JSON values under settings keys (the
gateway's chat turns until version 8). The migration moves each recognised row into its own
collection and deletes it from settings; a row that does not parse stays where it is
(nothing is lost, nothing is guessed). Running it again moves nothing twice.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from pydantic import BaseModel, ValidationError

from shared.store._common import normalise_time
from shared.store.models_state import (
    TURN_RETENTION,
    ChatProposal,
    ChatTurn,
    CustomTopic,
    FeedbackVote,
    Flag,
    IdempotencyRecord,
    Lease,
    MergeProgress,
    UploadMessage,
)

log = logging.getLogger(__name__)

PROPOSAL_PREFIX = "proposal:"
FEEDBACK_PREFIX = "feedback:"
TURN_PREFIX = "turn:"
UPLOAD_PREFIX = "gateway:upload:"
PROGRESS_PREFIX = "extractor.progress."
LOCKS_KEY = "content.locks"
HANDLED_KEY = "content.handled_requests"
CUSTOM_TOPICS_KEY = "content.custom_topics"
SAMPLE_FLAG = "extractor.sample_handbook"
# The scope and lifetime under which the content service's handled requests were moved,
# and the prefix of its per-topic generation locks.
CONTENT_REQUESTS_SCOPE = "content.requested"
CONTENT_LOCK_PREFIX = "content:"
HANDLED_TTL = timedelta(days=7)


@dataclass
class LegacyMoves:
    """The rows to write into the new collections and the settings keys they replace."""

    proposals: list[ChatProposal] = field(default_factory=list)
    turns: list[ChatTurn] = field(default_factory=list)
    votes: list[FeedbackVote] = field(default_factory=list)
    uploads: list[UploadMessage] = field(default_factory=list)
    progress: list[MergeProgress] = field(default_factory=list)
    leases: list[Lease] = field(default_factory=list)
    handled: list[IdempotencyRecord] = field(default_factory=list)
    custom_topics: list[CustomTopic] = field(default_factory=list)
    flags: list[Flag] = field(default_factory=list)
    moved_keys: list[str] = field(default_factory=list)


def _time(value: Any, default: datetime) -> datetime:
    try:
        return normalise_time(datetime.fromisoformat(str(value)))
    except ValueError:
        return default


def _valid[M: BaseModel](model: type[M], data: dict[str, Any]) -> M:
    return model.model_validate({k: v for k, v in data.items() if k in model.model_fields})


def _one(key: str, value: Any, moves: LegacyMoves, now: datetime) -> bool:
    """Add the move of one settings row to moves; False when the row is not recognised."""
    if key.startswith(PROPOSAL_PREFIX) and isinstance(value, dict):
        if value.get("kind") != "r42-proposal":
            return False
        data = {**value, "created_at": _time(value.get("created_at"), now)}
        if data.get("decided_at"):
            data["decided_at"] = _time(data["decided_at"], now)
        moves.proposals.append(_valid(ChatProposal, data))
    elif key.startswith(FEEDBACK_PREFIX) and isinstance(value, dict):
        at = _time(value.get("at"), now)
        moves.votes.append(
            FeedbackVote(
                turn_id=str(value["turn"]),
                user=str(value["user"]),
                value="up" if value.get("positive") else "down",
                surface=value.get("where"),
                created_at=at,
                updated_at=at,
            )
        )
    elif key.startswith(TURN_PREFIX) and isinstance(value, dict):
        at = _time(value.get("at"), now)
        if at + TURN_RETENTION > now:  # an expired turn is simply gone
            data = {**value, "turn_id": key.removeprefix(TURN_PREFIX), "created_at": at}
            moves.turns.append(_valid(ChatTurn, {**data, "expires_at": at + TURN_RETENTION}))
    elif key.startswith(UPLOAD_PREFIX) and isinstance(value, dict):
        source_id = key.removeprefix(UPLOAD_PREFIX)
        data = {**value, "source_id": source_id, "final": bool(value.get("final"))}
        moves.uploads.append(_valid(UploadMessage, {**data, "created_at": now, "updated_at": now}))
    elif key.startswith(PROGRESS_PREFIX) and isinstance(value, dict):
        source_id = key.removeprefix(PROGRESS_PREFIX)
        moves.progress.append(_valid(MergeProgress, {**value, "source_id": source_id}))
    elif key == LOCKS_KEY and isinstance(value, dict):
        for name, held in value.items():
            until = datetime.fromtimestamp(float(held["until"]), UTC)
            if until > now:  # expired leases are simply gone
                lease = Lease(
                    name=f"{CONTENT_LOCK_PREFIX}{name}", owner=held["owner"], acquired_at=now,
                    expires_at=until,
                )  # fmt: skip
                moves.leases.append(lease)
    elif key == HANDLED_KEY and isinstance(value, list):
        for record in value:
            at = _time(record.get("at"), now)
            moves.handled.append(
                IdempotencyRecord(
                    scope=CONTENT_REQUESTS_SCOPE,
                    key=str(record["event_id"]),
                    value=record,
                    created_at=at,
                    expires_at=max(at, now) + HANDLED_TTL,
                )
            )
    elif key == CUSTOM_TOPICS_KEY and isinstance(value, dict):
        for record in value.values():
            data = {**record, "created_at": _time(record.get("created_at"), now)}
            moves.custom_topics.append(_valid(CustomTopic, data))
    elif key == SAMPLE_FLAG and isinstance(value, dict):
        moves.flags.append(Flag(name=key, value=value, updated_at=now))
    else:
        return False
    return True


def plan_legacy_moves(settings: dict[str, Any], *, now: datetime) -> LegacyMoves:
    """Which settings rows move where; unrecognised or unparseable rows stay in settings."""
    moves = LegacyMoves()
    for key, value in sorted(settings.items()):
        trial = LegacyMoves()
        try:
            recognised = _one(key, value, trial, now)
        except (KeyError, TypeError, ValueError, ValidationError) as exc:
            log.warning("settings row %r kept in settings: it does not parse (%s)", key, exc)
            continue
        if not recognised:
            continue
        for name in LegacyMoves.__dataclass_fields__:
            getattr(moves, name).extend(getattr(trial, name))
        moves.moved_keys.append(key)
    return moves
