"""KB import/export files ({"topics": [...], "relations": [...]}) and graph statistics.

An import is validated as a whole before anything is written: every invalid row is
reported with its index, id and reason, and the valid rows are applied in one atomic
`apply_kb_changes` only when there are no problems (or the caller chose to skip them).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field, ValidationError

from shared.errors import BadInputError
from shared.store._common import describe_validation
from shared.store.models import KbChanges, Relation, Topic, TopicCounts
from shared.store.protocols import Store

_SECTIONS = ("topics", "relations")


class RowProblem(BaseModel):
    """One rejected row of an import file."""

    section: Literal["topics", "relations"]
    index: int
    ident: str
    reason: str


class ImportPlan(BaseModel):
    """The valid rows of an import file and the problems found in the others."""

    topics: list[Topic] = Field(default_factory=list)
    relations: list[Relation] = Field(default_factory=list)
    problems: list[RowProblem] = Field(default_factory=list)


class ImportRejectedError(BadInputError):
    """An import file had invalid rows; nothing was written."""

    def __init__(self, problems: list[RowProblem]) -> None:
        self.problems = problems
        super().__init__(
            f"{len(problems)} invalid row(s); nothing was imported "
            "(fix them, or use --skip-invalid to import the valid rows only)"
        )


class KbStats(BaseModel):
    """What `r42 kb stats` shows."""

    topics: TopicCounts
    relations_by_type: dict[str, int]
    sources_by_status: dict[str, int]


def read_kb_file(path: Path) -> dict[str, Any]:
    """Read and shape-check an import file (BadInputError for missing, non-JSON or wrong shape)."""
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise BadInputError(f"file not found: {path}") from None
    except IsADirectoryError:
        raise BadInputError(f"{path} is a directory, not a JSON file") from None
    except OSError as exc:
        raise BadInputError(f"cannot read {path}: {exc.strerror}") from None
    try:
        doc = json.loads(raw)
    except UnicodeDecodeError:
        raise BadInputError(f"{path} is not UTF-8 text") from None
    except json.JSONDecodeError as exc:
        raise BadInputError(
            f"{path} is not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg})"
        ) from None
    return check_shape(doc, origin=str(path))


def check_shape(doc: Any, *, origin: str = "the document") -> dict[str, Any]:
    """Check the top level is {"topics": [...], "relations": [...]}."""
    if not isinstance(doc, dict):
        raise BadInputError(
            f'{origin} must be a JSON object {{"topics": [...], "relations": [...]}}'
        )
    unknown = sorted(set(doc) - set(_SECTIONS))
    if unknown:
        raise BadInputError(f"{origin} has unknown top-level keys: {', '.join(unknown)}")
    if not any(key in doc for key in _SECTIONS):
        raise BadInputError(f'{origin} has neither "topics" nor "relations"')
    for key in _SECTIONS:
        if not isinstance(doc.get(key, []), list):
            raise BadInputError(f'{origin}: "{key}" must be a list')
    return doc


def _relation_ident(row: Any) -> str:
    if not isinstance(row, dict):
        return "?"
    return f"{row.get('source', '?')} -{row.get('type', '?')}-> {row.get('target', '?')}"


def _relation_reason(exc: ValidationError, row: dict[str, Any]) -> str:
    reason = describe_validation(exc)
    if row.get("type") == "executes":
        reason += " (legacy 'executes': use 'executed_by' with source and target swapped)"
    return reason


def _topic_problem(row: Any, first_row: dict[str, int]) -> tuple[Topic | None, str]:
    if not isinstance(row, dict):
        return None, "row is not a JSON object"
    try:
        topic = Topic.model_validate(row)
    except ValidationError as exc:
        return None, describe_validation(exc)
    if topic.id in first_row:
        return None, f"duplicate id (first at row {first_row[topic.id]})"
    return topic, ""


def _relation_problem(
    row: Any, known: set[str], seen: dict[tuple[str, str, str], int]
) -> tuple[Relation | None, str]:
    if not isinstance(row, dict):
        return None, "row is not a JSON object"
    try:
        relation = Relation.model_validate(row)
    except ValidationError as exc:
        return None, _relation_reason(exc, row)
    missing = [t for t in (relation.source, relation.target) if t not in known]
    if missing:
        return None, "endpoint not found in the file or the store: " + ", ".join(missing)
    key = relation.key.as_tuple()
    if key in seen:
        return None, f"duplicate relation (first at row {seen[key]})"
    return relation, ""


def plan_import(doc: dict[str, Any], *, existing_topic_ids: set[str]) -> ImportPlan:
    """Validate every row; relations may point at topics in the file or already stored."""
    plan = ImportPlan()
    first_row: dict[str, int] = {}
    for index, row in enumerate(doc.get("topics", [])):
        topic, reason = _topic_problem(row, first_row)
        if topic is None:
            ident = str(row.get("id", "?")) if isinstance(row, dict) else "?"
            plan.problems.append(
                RowProblem(section="topics", index=index, ident=ident, reason=reason)
            )
            continue
        first_row[topic.id] = index
        plan.topics.append(topic)
    known = existing_topic_ids | set(first_row)
    seen: dict[tuple[str, str, str], int] = {}
    for index, row in enumerate(doc.get("relations", [])):
        relation, reason = _relation_problem(row, known, seen)
        if relation is None:
            plan.problems.append(
                RowProblem(
                    section="relations", index=index, ident=_relation_ident(row), reason=reason
                )
            )
            continue
        seen[relation.key.as_tuple()] = index
        plan.relations.append(relation)
    return plan


async def import_kb(store: Store, doc: dict[str, Any], *, skip_invalid: bool = False) -> ImportPlan:
    """Validate a document against the store and apply its valid rows in one transaction."""
    plan = plan_import(check_shape(doc), existing_topic_ids=await store.topics.ids())
    if plan.problems and not skip_invalid:
        raise ImportRejectedError(plan.problems)
    changes = KbChanges(topics_upsert=plan.topics, relations_upsert=plan.relations)
    if not changes.empty:
        await store.apply_kb_changes(changes)
    return plan


def topic_record(topic: Topic) -> dict[str, Any]:
    """A topic as it appears in an export file (no store timestamps)."""
    record = topic.model_dump(mode="json", exclude={"created_at", "updated_at", "metadata"})
    record["metadata"] = topic.metadata.model_dump(mode="json", exclude_none=True)
    return record


def relation_record(relation: Relation) -> dict[str, Any]:
    """A relation as it appears in an export file."""
    return relation.model_dump(mode="json", exclude_none=True)


async def export_kb(store: Store) -> dict[str, Any]:
    """The whole graph in import format, sorted so exports are stable and diffable."""
    topics = await store.topics.list()
    relations = await store.relations.list()
    return {
        "topics": [topic_record(t) for t in topics],
        "relations": [relation_record(r) for r in relations],
    }


async def kb_stats(store: Store) -> KbStats:
    """Counts of topics by type and relevance, relations by type, sources by status."""
    return KbStats(
        topics=await store.topics.counts(),
        relations_by_type=await store.relations.count_by_type(),
        sources_by_status=await store.sources.count_by_status(),
    )
