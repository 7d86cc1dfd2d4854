"""SQLite proposals, feedback votes and upload progress messages."""

from __future__ import annotations

import builtins
import json
import sqlite3
import uuid
from datetime import datetime
from typing import Any

from shared.store._common import iso_week, need, utcnow
from shared.store.models_state import (
    ChatProposal,
    DecidedStatus,
    FeedbackRate,
    FeedbackValue,
    FeedbackVote,
    ProposalStatus,
    UploadMessage,
    check_decided,
)
from shared.store.sqlite.db import SqliteDb, dumps, loads_or_none, to_text

_PROPOSAL_FIELDS = (
    "id", "delta", "summary", "proposed_by", "prompt_version", "status", "decided_by",
    "decided_at", "suggestion_id", "decision_token", "created_at",
)  # fmt: skip
_PROPOSAL_COLUMNS = ", ".join(_PROPOSAL_FIELDS)
_FEEDBACK_FIELDS = (
    "turn_id", "user", "value", "question", "topic_ids", "answer", "model", "prompt_version",
    "conversation", "surface", "reason", "created_at", "updated_at",
)  # fmt: skip
_FEEDBACK_COLUMNS = ", ".join(_FEEDBACK_FIELDS)
_UPLOAD_FIELDS = (
    "source_id",
    "channel",
    "ts",
    "name",
    "final",
    "outcome",
    "created_at",
    "updated_at",
)
_UPLOAD_COLUMNS = ", ".join(_UPLOAD_FIELDS)


def _proposal(row: tuple[Any, ...]) -> ChatProposal:
    data = dict(zip(_PROPOSAL_FIELDS, row, strict=True))
    data["delta"] = json.loads(data["delta"])
    return ChatProposal.model_validate(data)


def _vote(row: tuple[Any, ...]) -> FeedbackVote:
    data = dict(zip(_FEEDBACK_FIELDS, row, strict=True))
    data["topic_ids"] = json.loads(data["topic_ids"])
    return FeedbackVote.model_validate(data)


def _upload(row: tuple[Any, ...]) -> UploadMessage:
    data = dict(zip(_UPLOAD_FIELDS, row, strict=True))
    data["final"] = bool(data["final"])
    data["outcome"] = loads_or_none(data["outcome"])
    return UploadMessage.model_validate(data)


class SqliteProposals:
    """ProposalRepository on SQLite."""

    def __init__(self, db: SqliteDb) -> None:
        self._db = db

    async def create(self, proposal: ChatProposal) -> ChatProposal:
        """Store an open proposal (an existing id returns the stored one unchanged)."""
        data = proposal.model_dump()
        data["delta"] = dumps(proposal.delta)
        data["decided_at"] = to_text(proposal.decided_at)
        data["created_at"] = to_text(proposal.created_at or utcnow())
        params = tuple(data[f] for f in _PROPOSAL_FIELDS)
        placeholders = ", ".join("?" * len(_PROPOSAL_FIELDS))

        def run(conn: sqlite3.Connection) -> Any:
            conn.execute(
                f"INSERT OR IGNORE INTO proposals ({_PROPOSAL_COLUMNS}) VALUES ({placeholders})",
                params,
            )
            return _select_proposal(conn, proposal.id)

        return _proposal(await self._db.write(run))

    async def get(self, proposal_id: str) -> ChatProposal | None:
        """One proposal or None."""
        row = await self._db.read(lambda c: _select_proposal(c, proposal_id))
        return _proposal(row) if row else None

    async def list(
        self, *, status: ProposalStatus | None = None, limit: int = 100
    ) -> list[ChatProposal]:
        """Proposals, newest first."""
        where = "WHERE status = ?" if status else ""
        params: tuple[Any, ...] = (status, limit) if status else (limit,)
        sql = (
            f"SELECT {_PROPOSAL_COLUMNS} FROM proposals {where} "
            "ORDER BY created_at DESC, id LIMIT ?"
        )
        rows = await self._db.read(lambda c: c.execute(sql, params).fetchall())
        return [_proposal(r) for r in rows]

    async def decide(
        self,
        proposal_id: str,
        *,
        status: DecidedStatus,
        by: str,
        suggestion_id: str | None = None,
        now: datetime | None = None,
    ) -> ChatProposal | None:
        """Move an open proposal to status (compare-and-set); None if missing or decided."""
        need(by, "a decision needs the deciding user's id")
        check_decided(status)
        params = (status, by, to_text(now or utcnow()), suggestion_id, uuid.uuid4().hex)

        def run(conn: sqlite3.Connection) -> Any:
            changed = conn.execute(
                "UPDATE proposals SET status = ?, decided_by = ?, decided_at = ?, "
                "suggestion_id = ?, decision_token = ? WHERE id = ? AND status = 'open'",
                (*params, proposal_id),
            ).rowcount
            return _select_proposal(conn, proposal_id) if changed else None

        row = await self._db.write(run)
        return _proposal(row) if row else None

    async def reopen(self, proposal_id: str, *, decision_token: str) -> bool:
        """Undo the decision holding this token; False if the proposal moved on."""
        sql = (
            "UPDATE proposals SET status = 'open', decided_by = NULL, decided_at = NULL, "
            "suggestion_id = NULL, decision_token = NULL WHERE id = ? AND decision_token = ?"
        )
        params = (proposal_id, need(decision_token, "reopening needs the decision token"))
        return await self._db.write(lambda c: c.execute(sql, params).rowcount > 0)


def _select_proposal(conn: sqlite3.Connection, proposal_id: str) -> Any:
    sql = f"SELECT {_PROPOSAL_COLUMNS} FROM proposals WHERE id = ?"
    return conn.execute(sql, (proposal_id,)).fetchone()


class SqliteFeedback:
    """FeedbackRepository on SQLite; topic ids are a JSON array read with json_each."""

    def __init__(self, db: SqliteDb) -> None:
        self._db = db

    async def record(self, vote: FeedbackVote, *, now: datetime | None = None) -> FeedbackVote:
        """Store or replace the user's vote on a turn (created_at kept, updated_at set)."""
        moment = now or utcnow()
        created = vote.created_at or moment
        data = vote.model_dump()
        data.update(
            topic_ids=dumps(vote.topic_ids),
            created_at=to_text(created),
            updated_at=to_text(moment),
            week=iso_week(created),
        )
        fields = (*_FEEDBACK_FIELDS, "week")
        params = tuple(data[f] for f in fields)
        kept = {"turn_id", "user", "created_at", "week"}
        updates = ", ".join(f"{f} = excluded.{f}" for f in fields if f not in kept)
        sql = (
            f"INSERT INTO feedback ({', '.join(fields)}) VALUES ({', '.join('?' * len(fields))}) "
            f"ON CONFLICT (turn_id, user) DO UPDATE SET {updates}"
        )

        def run(conn: sqlite3.Connection) -> Any:
            conn.execute(sql, params)
            return conn.execute(
                f"SELECT {_FEEDBACK_COLUMNS} FROM feedback WHERE turn_id = ? AND user = ?",
                (vote.turn_id, vote.user),
            ).fetchone()

        return _vote(await self._db.write(run))

    async def get(self, turn_id: str, user: str) -> FeedbackVote | None:
        """One user's vote on one turn."""
        sql = f"SELECT {_FEEDBACK_COLUMNS} FROM feedback WHERE turn_id = ? AND user = ?"
        row = await self._db.read(lambda c: c.execute(sql, (turn_id, user)).fetchone())
        return _vote(row) if row else None

    async def list(
        self,
        *,
        since: datetime | None = None,
        until: datetime | None = None,
        value: FeedbackValue | None = None,
        limit: int = 100,
    ) -> list[FeedbackVote]:
        """Votes cast in [since, until), newest first (optionally only up or down)."""
        where, params = _window(since, until)
        if value is not None:
            where += " AND value = ?"
            params += (value,)
        sql = (
            f"SELECT {_FEEDBACK_COLUMNS} FROM feedback WHERE {where} "
            "ORDER BY created_at DESC, turn_id, user LIMIT ?"
        )
        rows = await self._db.read(lambda c: c.execute(sql, (*params, max(limit, 0))).fetchall())
        return [_vote(r) for r in rows]

    async def rates(
        self, *, since: datetime | None = None, until: datetime | None = None
    ) -> builtins.list[FeedbackRate]:
        """Up / down per retrieved topic and ISO week, by week then topic (None first)."""
        where, params = _window(since, until, prefix="f.")
        counts = "sum(f.value = 'up'), sum(f.value = 'down')"
        sql = (
            f"SELECT t.value, f.week, {counts} FROM feedback f, json_each(f.topic_ids) t "
            f"WHERE {where} GROUP BY t.value, f.week UNION ALL "
            f"SELECT NULL, f.week, {counts} FROM feedback f "
            f"WHERE {where} AND f.topic_ids = '[]' GROUP BY f.week"
        )
        rows = await self._db.read(lambda c: c.execute(sql, params * 2).fetchall())
        rates = [FeedbackRate(topic_id=r[0], week=r[1], up=r[2], down=r[3]) for r in rows]
        return sorted(rates, key=lambda r: (r.week, r.topic_id is not None, r.topic_id or ""))


def _window(
    since: datetime | None, until: datetime | None, *, prefix: str = ""
) -> tuple[str, tuple[Any, ...]]:
    where = f"{prefix}created_at >= ?"
    params: tuple[Any, ...] = (to_text(since) if since else "",)
    if until is not None:
        where += f" AND {prefix}created_at < ?"
        params += (to_text(until),)
    return where, params


class SqliteUploadMessages:
    """UploadMessageRepository on SQLite."""

    def __init__(self, db: SqliteDb) -> None:
        self._db = db

    async def put(self, message: UploadMessage) -> None:
        """Remember (or replace) the progress message of an upload."""
        now = to_text(utcnow())
        data = message.model_dump()
        data.update(
            final=int(message.final),
            outcome=None if message.outcome is None else dumps(message.outcome),
            created_at=to_text(message.created_at) or now,
            updated_at=now,
        )
        params = tuple(data[f] for f in _UPLOAD_FIELDS)
        sql = (
            f"INSERT OR REPLACE INTO upload_messages ({_UPLOAD_COLUMNS}) "
            f"VALUES ({', '.join('?' * len(_UPLOAD_FIELDS))})"
        )
        await self._db.write(lambda c: c.execute(sql, params))

    async def get(self, source_id: str) -> UploadMessage | None:
        """The progress message of a source, or None."""
        sql = f"SELECT {_UPLOAD_COLUMNS} FROM upload_messages WHERE source_id = ?"
        row = await self._db.read(lambda c: c.execute(sql, (source_id,)).fetchone())
        return _upload(row) if row else None

    async def finish(
        self, source_id: str, outcome: dict[str, Any], *, now: datetime | None = None
    ) -> UploadMessage | None:
        """Mark the upload final with its outcome; None if missing or already final."""
        params = (dumps(outcome), to_text(now or utcnow()), source_id)

        def run(conn: sqlite3.Connection) -> Any:
            changed = conn.execute(
                "UPDATE upload_messages SET final = 1, outcome = ?, updated_at = ? "
                "WHERE source_id = ? AND final = 0",
                params,
            ).rowcount
            if not changed:
                return None
            sql = f"SELECT {_UPLOAD_COLUMNS} FROM upload_messages WHERE source_id = ?"
            return conn.execute(sql, (source_id,)).fetchone()

        row = await self._db.write(run)
        return _upload(row) if row else None

    async def delete(self, source_id: str) -> bool:
        """Forget a mapping."""
        sql = "DELETE FROM upload_messages WHERE source_id = ?"
        return await self._db.write(lambda c: c.execute(sql, (source_id,)).rowcount > 0)
