"""Which topic a request is about: a KG topic, a custom topic, or a new custom topic.

A custom topic ("I want to learn about X") is content-only: the KG keeps one writer (the
extractor), so the new topic is stored in the content service's own record (settings key
`content.custom_topics`) and filed as a pending Suggestion (`custom-topic-<id>`) whose
delta an admin can approve into the KG. Its content is keyed by the new id, which never
collides with a KG or custom id (`-2`, `-3`, … are appended).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any

from services.content.models import CustomTopic
from services.content.ports import ContentStore
from services.content.prompts import (
    CUSTOM_TOPIC_PROMPT_VERSION,
    CUSTOM_TOPIC_SYSTEM,
    CUSTOM_TOPIC_TOOL,
    custom_topic_message,
)
from shared.errors import BadInputError
from shared.kb import fold_text, is_kebab_id, to_kebab_id
from shared.kb.models import MAX_ID_CHARS
from shared.llm import call_llm
from shared.store import CustomTopic as StoredCustomTopic
from shared.store import Suggestion, Topic, utcnow

MAX_REQUEST_CHARS = 200


@dataclass(frozen=True)
class LearningTopic:
    """What content is generated from: a KG topic or a custom one."""

    id: str
    label: str
    description: str = ""
    type: str = "concept"
    relevance: str = "standard"
    custom: bool = False

    @property
    def fingerprint(self) -> str:
        """Identifies the topic text content was made from (label and description)."""
        return topic_fingerprint(self.label, self.description)


def topic_fingerprint(label: str, description: str) -> str:
    """sha256 of label and description (first 16 hex): a change means content is stale."""
    return hashlib.sha256(f"{label}\n{description}".encode()).hexdigest()[:16]


def _fold(text: str) -> str:
    return " ".join(fold_text(text).split())


def from_kg(topic: Topic) -> LearningTopic:
    """A KG topic as a learning topic."""
    return LearningTopic(
        id=topic.id, label=topic.label, description=topic.description, type=topic.type,
        relevance=topic.learning_relevance,
    )  # fmt: skip


def _from_record(record: dict[str, Any]) -> LearningTopic:
    return LearningTopic(
        id=record["id"], label=record["label"], description=record.get("description", ""),
        type=record.get("type", "concept"), relevance=record.get("learning_relevance", "standard"),
        custom=True,
    )  # fmt: skip


async def custom_topics(store: ContentStore) -> dict[str, dict[str, Any]]:
    """Every custom topic record by id."""
    return {t.id: t.model_dump(mode="json") for t in await store.custom_topics.list()}


async def get_topic(store: ContentStore, topic_id: str) -> LearningTopic | None:
    """A topic by exact id: the KG first, then the custom topics."""
    if is_kebab_id(topic_id):
        topic = await store.topics.get(topic_id)
        if topic is not None:
            return from_kg(topic)
    record = (await custom_topics(store)).get(topic_id)
    return _from_record(record) if record else None


async def find_topic(store: ContentStore, ref: str) -> LearningTopic | None:
    """Resolve a reference: id, kebab id of the text, label or earlier request (case-folded)."""
    ref = ref.strip()
    if not ref:
        raise BadInputError("a topic reference must not be empty")
    found = await get_topic(store, ref)
    if found is not None:
        return found
    try:
        kebab = to_kebab_id(ref)
    except BadInputError:
        kebab = ""
    if kebab and kebab != ref and (found := await get_topic(store, kebab)) is not None:
        return found
    return await _by_label(store, ref)


async def _by_label(store: ContentStore, text: str) -> LearningTopic | None:
    wanted = _fold(text)
    for topic in await store.topics.list():
        if _fold(topic.label) == wanted:
            return from_kg(topic)
    for record in (await custom_topics(store)).values():
        if wanted in (_fold(record["label"]), record.get("requested_as")):
            return _from_record(record)
    return None


def unique_topic_id(base: str, taken: set[str]) -> str:
    """`base`, or `base-2`, `base-3`, … — the first one not taken (kept within the id limit)."""
    if base not in taken:
        return base
    n = 2
    while True:
        suffix = f"-{n}"
        candidate = base[: MAX_ID_CHARS - len(suffix)].rstrip("-") + suffix
        if candidate not in taken:
            return candidate
        n += 1


async def polish_request(request_text: str) -> tuple[CustomTopic, bool]:
    """Ask the model to turn a free-text request into a topic; returns it and `offline`."""
    result = await call_llm(
        task="content.custom_topic",
        tier="fast",
        system=CUSTOM_TOPIC_SYSTEM,
        user=custom_topic_message(request_text),
        tools=[CUSTOM_TOPIC_TOOL],
        tool_choice=CUSTOM_TOPIC_TOOL,
        max_tokens=1024,
    )
    parsed = result.tool_uses[0].parsed
    assert isinstance(parsed, CustomTopic)
    return parsed, result.offline


async def create_custom_topic(
    store: ContentStore, *, request_text: str, requested_by: str
) -> LearningTopic:
    """Polish a learning request into a custom topic, store it and file it as a suggestion."""
    text = " ".join(request_text.split())
    if not text:
        raise BadInputError("say what you want to learn about")
    if len(text) > MAX_REQUEST_CHARS:
        raise BadInputError(f"a learning request is at most {MAX_REQUEST_CHARS} characters")
    polished, offline = await polish_request(text)
    same = await _by_label(store, polished.label)
    if same is not None:
        return same  # the polished label names a topic we already have
    base = to_kebab_id(polished.label)
    kg_ids = await store.topics.ids()
    while True:  # another request may take the id between our read and our insert
        topic_id = unique_topic_id(base, kg_ids | await store.custom_topics.ids())
        custom = StoredCustomTopic(
            id=topic_id, label=polished.label, description=polished.description,
            type=polished.type, learning_relevance=polished.learning_relevance or "standard",
            requested_as=_fold(text), requested_by=requested_by, created_at=utcnow(),
            prompt_version=CUSTOM_TOPIC_PROMPT_VERSION, offline=offline,
            suggestion_id=f"custom-topic-{topic_id}",
        )  # fmt: skip
        if await store.custom_topics.add(custom):
            break
    topic = _from_record(custom.model_dump(mode="json"))
    # The delta has the shape of the bus's KbDelta, so approving it is an ordinary delta.
    delta_topic = {
        "id": topic.id, "label": topic.label, "type": topic.type,
        "description": topic.description, "learning_relevance": topic.relevance,
    }  # fmt: skip
    await store.suggestions.create(
        Suggestion(
            id=f"custom-topic-{topic.id}",
            delta={
                "reason": f"Custom learning topic requested as {text!r}",
                "topics": [delta_topic],
                "relations": [],
            },
            proposed_by=requested_by,
            context={"kind": "custom_topic", "service": "content", "requested_as": text},
        )
    )
    return topic


async def resolve_or_create(store: ContentStore, *, ref: str, requested_by: str) -> LearningTopic:
    """The topic a request names; free text that matches nothing becomes a custom topic."""
    found = await find_topic(store, ref)
    if found is not None:
        return found
    return await create_custom_topic(store, request_text=ref, requested_by=requested_by)
