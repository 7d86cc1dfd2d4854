"""Admin refinement of a stored article through patch tools (never a rewrite)."""

from __future__ import annotations

from dataclasses import dataclass

from services.content.generate import part_meta, read_part
from services.content.models import Article
from services.content.patches import PATCH_TOOLS, apply_and_validate
from services.content.ports import ContentStore
from services.content.prompts import REFINE_PROMPT_VERSION, REFINE_SYSTEM, refine_message
from services.content.topics import LearningTopic, find_topic
from shared.errors import BadInputError, NotFoundError
from shared.llm import call_llm
from shared.store import utcnow

MAX_INSTRUCTION_CHARS = 4000


@dataclass(frozen=True)
class Refinement:
    """The refined, stored article and the patch operations the model applied."""

    topic: LearningTopic
    article: Article
    applied: tuple[str, ...]
    offline: bool


async def refine_article(
    store: ContentStore, *, topic_ref: str, instruction: str, admin: str
) -> Refinement:
    """Ask the model for patches to a topic's article, apply them all or none, and store."""
    instruction = instruction.strip()
    if not instruction:
        raise BadInputError("say how the article should change")
    if len(instruction) > MAX_INSTRUCTION_CHARS:
        raise BadInputError(f"an instruction is at most {MAX_INSTRUCTION_CHARS} characters")
    if not admin.strip():
        raise BadInputError("a refinement needs the admin who asked for it")
    topic = await find_topic(store, topic_ref)
    if topic is None:
        raise NotFoundError(f"no topic {topic_ref!r} in the knowledge graph or custom topics")
    content = await store.content.get(topic.id)
    current = read_part(content, "article")
    if not isinstance(current, Article):
        raise NotFoundError(
            f"topic {topic.id!r} has no article to refine yet; generate one first "
            f"(r42 learn {topic.id} --type article)"
        )
    result = await call_llm(
        task="content.refine",
        tier="standard",
        system=REFINE_SYSTEM,
        user=refine_message(current.model_dump(mode="json"), instruction),
        tools=list(PATCH_TOOLS),
        tool_choice="any",
        max_tokens=4096,
    )
    refined = apply_and_validate(current, result.tool_uses)
    meta = part_meta(content, "article")
    meta.update(
        refined_at=utcnow().isoformat(),
        refined_by=admin,
        refinements=int(meta.get("refinements") or 0) + 1,
        refine_prompt_version=REFINE_PROMPT_VERSION,
        offline=bool(meta.get("offline")) or result.offline,
    )
    await store.content.set_part(
        topic.id, "article", {**refined.model_dump(mode="json"), "meta": meta},
        prompt_version=meta.get("prompt_version"), topic_fingerprint=meta.get("topic_fingerprint"),
    )  # fmt: skip
    return Refinement(
        topic=topic,
        article=refined,
        applied=tuple(use.name for use in result.tool_uses),
        offline=result.offline,
    )
