"""Repository protocols of service state: each concept has its own collection and methods."""

from __future__ import annotations

import builtins
from collections.abc import Iterable
from datetime import datetime
from typing import Any, Protocol

from shared.store.models_state import (
    ChatProposal,
    ChatTurn,
    CustomTopic,
    DecidedStatus,
    FeedbackRate,
    FeedbackValue,
    FeedbackVote,
    Flag,
    IdempotencyRecord,
    Lease,
    MergeProgress,
    ProposalStatus,
    UploadMessage,
)


class ProposalRepository(Protocol):
    """Graph deltas proposed in chat; decided once (compare-and-set from open)."""

    async def create(self, proposal: ChatProposal) -> ChatProposal:
        """Store an open proposal (an existing id returns the stored one unchanged)."""

    async def get(self, proposal_id: str) -> ChatProposal | None:
        """One proposal or None."""

    async def list(
        self, *, status: ProposalStatus | None = None, limit: int = 100
    ) -> list[ChatProposal]:
        """Proposals, newest first."""

    async def decide(
        self,
        proposal_id: str,
        *,
        status: DecidedStatus,
        by: str,
        suggestion_id: str | None = None,
        now: datetime | None = None,
    ) -> ChatProposal | None:
        """Move an open proposal to status; None if it is missing or already decided.

        The returned proposal carries a fresh decision_token that only this decision knows.
        """

    async def reopen(self, proposal_id: str, *, decision_token: str) -> bool:
        """Undo the decision that holds this token (back to open); False if another won."""


class TurnRepository(Protocol):
    """Chat turns a vote copies; each expires (TURN_RETENTION after it was put, by default)."""

    async def put(self, turn: ChatTurn, *, now: datetime | None = None) -> ChatTurn:
        """Remember (or replace) a turn; expired turns are dropped on the way."""

    async def get(self, turn_id: str, *, now: datetime | None = None) -> ChatTurn | None:
        """A turn that has not expired, or None."""

    async def prune(self, *, now: datetime | None = None) -> int:
        """Delete expired turns; how many went."""

    async def recent(
        self, *, since: datetime | None = None, limit: int = 100, now: datetime | None = None
    ) -> list[ChatTurn]:
        """Turns put at or after `since` that have not expired, newest first (the gap list)."""


class FeedbackRepository(Protocol):
    """👍 / 👎 votes on answers, with the turn they rate; the last click of a user counts."""

    async def record(self, vote: FeedbackVote, *, now: datetime | None = None) -> FeedbackVote:
        """Store or replace the user's vote on a turn (created_at kept, updated_at set)."""

    async def get(self, turn_id: str, user: str) -> FeedbackVote | None:
        """One user's vote on one turn."""

    async def list(
        self,
        *,
        since: datetime | None = None,
        until: datetime | None = None,
        value: FeedbackValue | None = None,
        limit: int = 100,
    ) -> list[FeedbackVote]:
        """Votes last changed in [since, until), newest first (down votes only: the gap list)."""

    async def rates(
        self, *, since: datetime | None = None, until: datetime | None = None
    ) -> builtins.list[FeedbackRate]:
        """Up / down per retrieved topic and ISO week of the vote, by week then topic."""


class UploadMessageRepository(Protocol):
    """Which chat message shows an upload's progress; finished once."""

    async def put(self, message: UploadMessage) -> None:
        """Remember (or replace) the progress message of an upload."""

    async def get(self, source_id: str) -> UploadMessage | None:
        """The progress message of a source, or None (not uploaded through chat)."""

    async def finish(
        self, source_id: str, outcome: dict[str, Any], *, now: datetime | None = None
    ) -> UploadMessage | None:
        """Mark the upload final with its outcome; None if missing or already final."""

    async def delete(self, source_id: str) -> bool:
        """Forget a mapping."""


class MergeProgressRepository(Protocol):
    """Running counts of each source's merged chunks."""

    async def add(
        self,
        source_id: str,
        *,
        changed_ids: Iterable[str] = (),
        topics_added: int = 0,
        topics_updated: int = 0,
        relations_added: int = 0,
        relations_dropped: int = 0,
        max_changed_ids: int = 500,
    ) -> MergeProgress:
        """Add one chunk's counts atomically; changed ids keep first-seen order, capped."""

    async def get(self, source_id: str) -> MergeProgress:
        """The counts so far (zeros when nothing was merged)."""

    async def delete(self, source_id: str) -> bool:
        """Forget a source's counts."""


class IdempotencyRepository(Protocol):
    """Keys of handled requests with their outcome; each check or insert is one row."""

    async def put_if_absent(
        self,
        scope: str,
        key: str,
        value: dict[str, Any],
        *,
        ttl_s: float,
        now: datetime | None = None,
    ) -> bool:
        """Record the key unless an unexpired record exists; True if this call recorded it."""

    async def get(
        self, scope: str, key: str, *, now: datetime | None = None
    ) -> IdempotencyRecord | None:
        """The unexpired record of a key, or None."""

    async def purge_expired(self, *, now: datetime | None = None, limit: int = 1000) -> int:
        """Delete up to limit expired records; returns how many."""


class CustomTopicRepository(Protocol):
    """Learning topics requested by users that the knowledge graph does not have."""

    async def add(self, topic: CustomTopic) -> bool:
        """Insert a topic; False (nothing changed) when its id is taken."""

    async def get(self, topic_id: str) -> CustomTopic | None:
        """One custom topic or None."""

    async def list(self) -> list[CustomTopic]:
        """Every custom topic, by id."""

    async def ids(self) -> set[str]:
        """Every custom topic id."""

    async def delete(self, topic_id: str) -> bool:
        """Remove a custom topic."""


class FlagRepository(Protocol):
    """Named markers with a small JSON value."""

    async def get(self, name: str) -> Flag | None:
        """A flag or None when unset."""

    async def set(self, name: str, value: dict[str, Any] | None = None) -> Flag:
        """Set (or replace) a flag."""

    async def set_if_absent(self, name: str, value: dict[str, Any] | None = None) -> bool:
        """Set a flag unless it is set; True if this call set it."""

    async def delete(self, name: str) -> bool:
        """Unset a flag."""


class LockRepository(Protocol):
    """Named leases shared by every process: atomic acquire, renew and owner-only release."""

    async def acquire(self, name: str, owner: str, *, ttl_s: float) -> bool:
        """Take the lease unless another owner holds an unexpired one (the holder re-takes)."""

    async def renew(self, name: str, owner: str, *, ttl_s: float) -> bool:
        """Extend the owner's lease to ttl_s from now; False if it was lost.

        Lost means another owner took it over or it was released: a lease that lapsed (a
        late renewal) but nobody took is still its holder's, since nobody else can have
        started the work it guards.
        """

    async def release(self, name: str, owner: str) -> bool:
        """Give the lease back; only its owner can (False otherwise)."""

    async def get(self, name: str) -> Lease | None:
        """The unexpired lease on a name, or None."""
