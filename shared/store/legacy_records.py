"""Migration 9: the last `settings` rows move into typed collections, then settings goes.

Until version 9 the extractor kept held extractions (`held:<key>`), undo images
(`undo:<id>`), provenance (`provenance:*`), the handbook tree cache and the chained kb hash
under settings keys, and the Teams surface its conversation references (`teams:*`). Each
adapter writes what this plan names and then drops the settings table (collection); a row
nothing recognises is named in the log before it goes, so an operator can see what it was.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from pydantic import ValidationError

from shared.store.legacy import _time
from shared.store.models import Assertion, KbChanges, Relation, RelationKey, Topic
from shared.store.models_provenance import ChangeBatch
from shared.store.models_records import ConversationRef, HandbookTree, HeldChange
from shared.store.models_state import Flag

log = logging.getLogger(__name__)

HELD_PREFIX = "held:"
UNDO_PREFIX = "undo:"
SOURCE_PREFIX = "provenance:source:"
NAME_PREFIX = "provenance:name:"
TREE_KEY = "handbook:tree"
KB_HASH_KEY = "kb:version_hash"
TEAMS_REF_PREFIX = "teams:ref:"
TEAMS_USER_PREFIX = "teams:user:"
TEAMS_SERVICE_KEY = "teams:service"
TEAMS_SERVICE_FLAG = "teams:service"
# Indexes derivable from the rows above: nothing of theirs needs moving.
DERIVED = ("held:index", "undo:log")
DERIVED_PREFIXES = ("provenance:topic:", "provenance:relation:")
ACTOR = "extractor"


@dataclass
class RecordMoves:
    """What migration 9 writes, and which settings keys it accounts for."""

    held: list[HeldChange] = field(default_factory=list)
    batches: list[ChangeBatch] = field(default_factory=list)
    assertions: list[Assertion] = field(default_factory=list)
    current: dict[str, str] = field(default_factory=dict)
    trees: list[HandbookTree] = field(default_factory=list)
    kb_hash: str | None = None
    refs: list[ConversationRef] = field(default_factory=list)
    flags: list[Flag] = field(default_factory=list)
    moved_keys: list[str] = field(default_factory=list)
    unplaced_keys: list[str] = field(default_factory=list)


def _key(raw: Any) -> RelationKey:
    source, target, kind = str(raw).split("|")
    return RelationKey.model_validate({"source": source, "target": target, "type": kind})


def _held(key: str, value: dict[str, Any], now: datetime) -> HeldChange:
    asserted = value.get("assertions") or {}
    return HeldChange(
        key=key, asserter=str(value["asserter"]), reason=str(value.get("reason", "")),
        updated_ids=[str(i) for i in value.get("updated_ids", [])],
        changes=KbChanges.model_validate(value.get("changes") or {}),
        topics=[str(t) for t in asserted.get("topics", [])],
        relations=[_key(r) for r in asserted.get("relations", [])],
        created_at=_time(value.get("at"), now),
    )  # fmt: skip


def _batch(undo_id: str, image: dict[str, Any], now: datetime) -> ChangeBatch:
    before = image.get("topics_before") or {}
    return ChangeBatch(
        id=undo_id, actor=ACTOR, reason=str(image.get("reason", "")),
        created_at=_time(image.get("at"), now),
        topics_before=[Topic.model_validate(t) for t in before.values() if t],
        topics_absent=sorted(i for i, t in before.items() if t is None),
        relations_before=[Relation.model_validate(r) for r in image.get("relations_before", [])],
        relations_absent=[_key(r) for r in image.get("relations_written", [])],
    )  # fmt: skip


def _assertions(asserter: str, value: dict[str, Any]) -> list[Assertion]:
    out = [Assertion(source_id=asserter, topic_id=str(t)) for t in value.get("topics", [])]
    out += [Assertion(source_id=asserter, relation=_key(r)) for r in value.get("relations", [])]
    return out


def _one(key: str, value: Any, moves: RecordMoves, users: dict[str, str], now: datetime) -> bool:
    if key in DERIVED or key.startswith(DERIVED_PREFIXES) or key.startswith(TEAMS_USER_PREFIX):
        return True  # rebuilt from the rows they index (teams users: see plan_record_moves)
    if key.startswith(HELD_PREFIX) and isinstance(value, dict):
        moves.held.append(_held(key.removeprefix(HELD_PREFIX), value, now))
    elif key.startswith(UNDO_PREFIX) and isinstance(value, dict):
        moves.batches.append(_batch(key.removeprefix(UNDO_PREFIX), value, now))
    elif key.startswith(SOURCE_PREFIX) and isinstance(value, dict):
        moves.assertions += _assertions(key.removeprefix(SOURCE_PREFIX), value)
    elif key.startswith(NAME_PREFIX) and isinstance(value, str) and value:
        moves.current[key.removeprefix(NAME_PREFIX)] = value
    elif key == TREE_KEY and isinstance(value, dict):
        files = [(str(p), str(s), int(n)) for p, s, n in value.get("files", [])]
        moves.trees.append(HandbookTree(where=str(value["where"]), path=str(value.get("path", "")),
                                        etag=value.get("etag"), files=files))  # fmt: skip
    elif key == KB_HASH_KEY and isinstance(value, str) and value:
        moves.kb_hash = value
    elif key.startswith(TEAMS_REF_PREFIX) and isinstance(value, dict):
        conversation = key.removeprefix(TEAMS_REF_PREFIX)
        moves.refs.append(ConversationRef(surface="teams", conversation_id=conversation,
                                          reference=value, user_id=users.get(conversation),
                                          updated_at=now))  # fmt: skip
    elif key == TEAMS_SERVICE_KEY and isinstance(value, dict):
        moves.flags.append(Flag(name=TEAMS_SERVICE_FLAG, value=value, updated_at=now))
    else:
        return False
    return True


def plan_record_moves(settings: dict[str, Any], *, now: datetime) -> RecordMoves:
    """Where every remaining settings row goes; what fits nowhere is listed as unplaced."""
    users: dict[str, str] = {}
    for key, value in sorted(settings.items()):
        if key.startswith(TEAMS_USER_PREFIX) and isinstance(value, dict):
            users[str(value.get("conversation", ""))] = key.removeprefix(TEAMS_USER_PREFIX)
    moves = RecordMoves()
    for key, value in sorted(settings.items()):
        trial = RecordMoves()
        try:
            placed = _one(key, value, trial, users, now)
        except (KeyError, TypeError, ValueError, ValidationError) as exc:
            log.warning("settings row %r does not parse and is dropped: %s", key, exc)
            placed = False
        if not placed:
            moves.unplaced_keys.append(key)
            continue
        moves.held += trial.held
        moves.batches += trial.batches
        moves.assertions += trial.assertions
        moves.current.update(trial.current)
        moves.trees += trial.trees
        moves.kb_hash = trial.kb_hash or moves.kb_hash
        moves.refs += trial.refs
        moves.flags += trial.flags
        moves.moved_keys.append(key)
    if moves.unplaced_keys:
        log.warning("settings rows no collection takes, dropped with the settings table: %s",
                    ", ".join(moves.unplaced_keys))  # fmt: skip
    return moves
