"""Generate, cache and read content parts (article, slides, infographic) per topic."""

from __future__ import annotations

import asyncio
import base64
import hashlib
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel

from services.content.models import Article, Infographic, LearningBundle, SlideDeck
from services.content.ports import ContentStore
from services.content.prompts import (
    PROMPT_VERSION,
    SYSTEM,
    TOOL_FOR_KIND,
    generation_message,
    is_older,
    topic_payload,
)
from services.content.topics import LearningTopic
from shared.errors import BadInputError
from shared.llm import LLMValidationError, call_llm
from shared.store import Content, ContentKind, HeldLease, utcnow

KINDS: tuple[ContentKind, ...] = ("article", "slides", "infographic")
CONTENT_TYPES: tuple[str, ...] = (*KINDS, "all")
MODEL_FOR_KIND: dict[str, type[BaseModel]] = {
    "article": Article,
    "slides": SlideDeck,
    "infographic": Infographic,
}
_MAX_TOKENS = {"article": 4096, "slides": 4096, "infographic": 2048, "all": 8192}
_NOT_CONTENT = ("meta", "image")


@dataclass(frozen=True)
class Outcome:
    """What ensure_content did: the stored content and the parts made now (empty = cached)."""

    topic: LearningTopic
    content: Content | None
    generated: tuple[str, ...]
    offline: bool = False


def kinds_of(content_type: str) -> tuple[ContentKind, ...]:
    """The parts a content type stands for ("all" → all three)."""
    if content_type == "all":
        return KINDS
    for kind in KINDS:
        if kind == content_type:
            return (kind,)
    raise BadInputError(
        f"unknown content type {content_type!r}; expected one of {', '.join(CONTENT_TYPES)}"
    )


def part_of(content: Content | None, kind: str) -> dict[str, Any] | None:
    """The stored JSON of one part (with its meta), or None."""
    return None if content is None else getattr(content, kind)


def part_meta(content: Content | None, kind: str) -> dict[str, Any]:
    """A part's meta; the row's prompt_version/fingerprint fill in for legacy parts."""
    part = part_of(content, kind)
    if part is None or content is None:
        return {}
    meta = dict(part.get("meta") or {})
    meta.setdefault("prompt_version", content.prompt_version)
    meta.setdefault("topic_fingerprint", content.topic_fingerprint)
    return meta


def read_part(content: Content | None, kind: str) -> BaseModel | None:
    """A stored part as its model (meta and image dropped), or None."""
    part = part_of(content, kind)
    if part is None:
        return None
    return MODEL_FOR_KIND[kind].model_validate(
        {k: v for k, v in part.items() if k not in _NOT_CONTENT}
    )


def part_png(content: Content | None) -> bytes | None:
    """The rendered infographic picture stored with the infographic, or None."""
    part = part_of(content, "infographic")
    image = (part or {}).get("image") or {}
    data = image.get("base64")
    return base64.b64decode(data) if data else None


def stale_reasons(content: Content, kind: str, topic: LearningTopic | None) -> list[str]:
    """Why a stored part is stale (empty when it is current)."""
    if part_of(content, kind) is None:
        return []
    if topic is None:
        return ["the topic no longer exists"]
    meta = part_meta(content, kind)
    reasons = []
    version = meta.get("prompt_version")
    if is_older(version):
        reasons.append(f"made with prompt {version or 'unknown'}, current is {PROMPT_VERSION}")
    if meta.get("topic_fingerprint") != topic.fingerprint:
        reasons.append("the topic changed since generation")
    if content.stale and not reasons:
        reasons.append("marked stale")
    return reasons


async def _generate(topic: LearningTopic, kind: str) -> tuple[BaseModel, bool, str]:
    tool = TOOL_FOR_KIND[kind]
    payload = topic_payload(
        topic_id=topic.id, label=topic.label, description=topic.description, type=topic.type
    )
    try:
        result = await call_llm(
            task=f"content.{kind}",
            tier="standard",
            system=SYSTEM,
            user=generation_message(payload, kind),
            tools=[tool],
            tool_choice=tool,
            max_tokens=_MAX_TOKENS[kind],
        )
    except LLMValidationError as exc:
        raise LLMValidationError(
            f"the generated {kind} for {topic.id!r} broke the content rules and was not "
            f"stored: {exc}"
        ) from exc
    return result.tool_uses[0].parsed, result.offline, result.model


async def _stored_value(
    kind: str, model: BaseModel, *, topic: LearningTopic, offline: bool, llm_model: str
) -> dict[str, Any]:
    value = model.model_dump(mode="json")
    value["meta"] = {
        "prompt_version": PROMPT_VERSION,
        "generated_at": utcnow().isoformat(),
        "topic_fingerprint": topic.fingerprint,
        "offline": offline,
        "model": llm_model,
    }
    if kind == "infographic":
        assert isinstance(model, Infographic)
        footer = "R42 · offline voorbeeld" if offline else "R42 · micro-learning"
        # Imported here: Pillow loads only when an infographic is drawn, not at start-up.
        from services.content.render import render_infographic_png

        png = await asyncio.to_thread(render_infographic_png, model, footer=footer)
        width, height = int.from_bytes(png[16:20], "big"), int.from_bytes(png[20:24], "big")
        value["image"] = {
            "format": "png", "width": width, "height": height,
            "sha256": hashlib.sha256(png).hexdigest(),
            "base64": base64.b64encode(png).decode("ascii"),
        }  # fmt: skip
    return value


async def ensure_content(
    store: ContentStore, *, topic: LearningTopic, content_type: str, force: bool = False,
    lease: HeldLease | None = None,
) -> Outcome:  # fmt: skip
    """Make the parts of a content type that are missing or stale (all when forced); cache them.

    Under a lease, each model call follows a lease check and each write carries its fence:
    a holder that stalled past the TTL (and was taken over) neither calls nor writes.
    """
    kinds = kinds_of(content_type)
    current = await store.content.get(topic.id)
    todo = [
        k
        for k in kinds
        if force
        or current is None
        or part_of(current, k) is None
        or stale_reasons(current, k, topic)
    ]
    if not todo:
        return Outcome(topic=topic, content=current, generated=())
    made: dict[ContentKind, tuple[BaseModel, bool, str]] = {}
    if len(todo) == len(KINDS):
        if lease is not None:
            await lease.check()
        bundle, offline, llm_model = await _generate(topic, "all")
        assert isinstance(bundle, LearningBundle)
        for kind in KINDS:
            made[kind] = (getattr(bundle, kind), offline, llm_model)
    else:
        for kind in todo:
            if lease is not None:
                await lease.check()
            made[kind] = await _generate(topic, kind)
    # Everything is generated and valid before anything is stored.
    values = {
        kind: await _stored_value(kind, model, topic=topic, offline=offline, llm_model=llm_model)
        for kind, (model, offline, llm_model) in made.items()
    }
    content = current
    for kind, value in values.items():
        content = await store.content.set_part(
            topic.id, kind, value,
            prompt_version=PROMPT_VERSION, topic_fingerprint=topic.fingerprint,
            fence=lease.fence if lease is not None else None,
        )  # fmt: skip
    offline_any = any(offline for _, offline, _ in made.values())
    return Outcome(topic=topic, content=content, generated=tuple(todo), offline=offline_any)
