"""Generate questions for a topic's bank: forced tool call → gate → shuffle → dedup → store."""

from __future__ import annotations

import hashlib
import logging
import random
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import cast

from services.quiz.gate import balanced_positions, gate_batch, question_key, shuffle_options
from services.quiz.models import (
    MAX_BATCH,
    TOOL_NAME,
    GeneratedQuestion,
    QuizQuestionsInput,
    quiz_tool,
)
from services.quiz.ports import QuizStore
from services.quiz.prompts import PROMPT_VERSION, SYSTEM, QuizPromptInput, user_message
from shared.errors import BadInputError, NotFoundError
from shared.llm import LLMOutputError, LLMTruncatedError, LLMValidationError, call_llm
from shared.store import QuizQuestion, Topic

log = logging.getLogger(__name__)

TASK = "quiz.generate"
DEFAULT_COUNT = 10
MAX_OTHER_TOPICS = 12


@dataclass(frozen=True)
class GenerationResult:
    """What one generation did: questions added, duplicates dropped, or why it was rejected."""

    topic_id: str
    added: list[QuizQuestion] = field(default_factory=list)
    duplicates: list[str] = field(default_factory=list)
    rejected: str | None = None
    emitted: int = 0
    offline: bool = False

    @property
    def ok(self) -> bool:
        """Whether the batch passed validation and the gate (even if all were duplicates)."""
        return self.rejected is None


def describe_rejection(exc: Exception) -> str:
    """A readable reason for a model output that failed validation (1-based question numbers)."""
    if not isinstance(exc, LLMValidationError):
        return f"the model's output was unusable: {exc}"
    # shared.llm words it "… does not match Model: loc.path: message; loc.path: message".
    listed = str(exc).split(" does not match ", 1)[-1].partition(": ")[2]
    parts = []
    for item in filter(None, listed.split("; ")):
        loc, sep, msg = item.partition(": ")
        tokens = loc.split(".") if sep else []
        if len(tokens) >= 2 and tokens[0] == "questions" and tokens[1].isdigit():
            field_path = ".".join(tokens[2:])
            where = f"question {int(tokens[1]) + 1}" + (f": {field_path}" if field_path else "")
            parts.append(f"{where}: {msg}")
        else:
            parts.append(item)
    detail = "; ".join(parts) if parts else str(exc)
    return f"the model's questions failed validation: {detail}"


async def accept_batch(
    *,
    store: QuizStore,
    topic_id: str,
    questions: Sequence[GeneratedQuestion],
    rng: random.Random,
    offline: bool = False,
) -> GenerationResult:
    """Gate the whole batch, shuffle each question's options, drop duplicates, store the rest."""
    reason = gate_batch(questions)
    if reason is not None:
        log.warning("quiz batch for %s rejected: %s", topic_id, reason)
        return GenerationResult(
            topic_id=topic_id, rejected=reason, emitted=len(questions), offline=offline
        )
    bank = await store.quiz_banks.get(topic_id)
    seen = {q.key for q in bank.questions} if bank else set()
    fresh: list[QuizQuestion] = []
    duplicates: list[str] = []
    # Balanced per batch: a small bank must not teach "the answer is usually B" by chance,
    # while each question's correct position stays uniformly random.
    width = min((len(q.options) for q in questions), default=1)
    positions = balanced_positions(len(questions), width, rng)
    for generated, position in zip(questions, positions, strict=True):
        shuffled = shuffle_options(generated, rng, correct_at=position)
        key = question_key(shuffled.question)
        if key in seen:
            duplicates.append(shuffled.question)
            continue
        seen.add(key)
        fresh.append(
            QuizQuestion(
                key=key,
                text=shuffled.question.strip(),
                options=[o.strip() for o in shuffled.options],
                correct_index=shuffled.correct_index,
                explanation=shuffled.explanation.strip(),
                difficulty=shuffled.difficulty,
                prompt_version=PROMPT_VERSION,
            )
        )
    added = await store.quiz_banks.add_questions(topic_id, fresh) if fresh else []
    # A concurrent generator may have stored the same key in between: the store dedups too.
    added_keys = {q.key for q in added}
    duplicates += [q.text for q in fresh if q.key not in added_keys]
    if duplicates:
        log.info(
            "quiz bank %s: dropped %d duplicate question(s): %s",
            topic_id, len(duplicates), "; ".join(d[:60] for d in duplicates),
        )  # fmt: skip
    return GenerationResult(
        topic_id=topic_id,
        added=added,
        duplicates=duplicates,
        emitted=len(questions),
        offline=offline,
    )


async def build_prompt_input(*, store: QuizStore, topic: Topic, count: int) -> QuizPromptInput:
    """The generation request for a topic: its text, neighbours, distractor topics, avoid list."""
    relations = await store.relations.list(topic_id=topic.id)
    neighbour_ids = {r.target if r.source == topic.id else r.source for r in relations}
    neighbours = {t.id: t for t in await store.topics.get_many(neighbour_ids)}
    related = []
    for rel in relations:
        other = neighbours.get(rel.target if rel.source == topic.id else rel.source)
        if other is None:
            continue
        relation = rel.type if rel.source == topic.id else f"inverse:{rel.type}"
        related.append({"label": other.label, "relation": relation})
    candidates = [
        t for t in await store.topics.list()
        if t.id != topic.id and t.id not in neighbour_ids and t.learning_relevance != "exclude"
    ]  # fmt: skip
    # Topics of the same type first (a role's distractors are roles), then a stable per-topic
    # order: distractor topics differ between topics but not between runs.
    candidates.sort(
        key=lambda t: (
            t.type != topic.type,
            hashlib.sha256(f"{topic.id}|{t.id}".encode()).hexdigest(),
        )
    )
    bank = await store.quiz_banks.get(topic.id)
    return QuizPromptInput(
        topic_id=topic.id,
        label=topic.label,
        type=topic.type,
        description=topic.description,
        count=count,
        related=related,
        others=[t.label for t in candidates[:MAX_OTHER_TOPICS]],
        avoid=[q.text for q in bank.questions] if bank else [],
    )


async def generate_questions(
    *,
    store: QuizStore,
    topic_id: str,
    count: int = DEFAULT_COUNT,
    rng: random.Random | None = None,
    tier: str = "standard",
) -> GenerationResult:
    """Ask the model for `count` questions about a topic and add the good, new ones to its bank.

    A batch failing schema validation or the quality gate is rejected whole: the bank is
    unchanged and `rejected` says why. Transient LLM failures propagate (retry later).
    """
    if not 1 <= count <= MAX_BATCH:
        raise BadInputError(f"count must be between 1 and {MAX_BATCH}, got {count}")
    topic = await store.topics.get(topic_id)
    if topic is None:
        raise NotFoundError(f"topic {topic_id!r} does not exist")
    request = await build_prompt_input(store=store, topic=topic, count=count)
    try:
        result = await call_llm(
            task=TASK,
            tier=tier,
            system=SYSTEM,
            user=user_message(request),
            tools=[quiz_tool()],
            tool_choice=TOOL_NAME,
            max_tokens=1024 + 400 * count,
        )
    except (LLMValidationError, LLMOutputError, LLMTruncatedError) as exc:
        reason = describe_rejection(exc)
        log.warning("quiz batch for %s rejected: %s", topic_id, reason)
        return GenerationResult(topic_id=topic_id, rejected=reason)
    # A forced tool call: call_llm guarantees one validated tool_use of our model.
    batch = cast(QuizQuestionsInput, result.tool_uses[0].parsed)
    return await accept_batch(
        store=store,
        topic_id=topic_id,
        questions=batch.questions,
        rng=rng or random.Random(),
        offline=result.offline,
    )


async def regenerate_bank(
    *, store: QuizStore, topic_id: str, count: int = DEFAULT_COUNT
) -> tuple[GenerationResult, int]:
    """A fresh batch replaces a topic's bank; a rejected batch leaves it as it was.

    The new questions are added first, then the old ones go (a quiz being taken never sees an
    empty bank); an old question the new batch repeated stays. Returns (result, removed).
    """
    bank = await store.quiz_banks.get(topic_id)
    old = {q.key for q in bank.questions} if bank else set()
    result = await generate_questions(store=store, topic_id=topic_id, count=count)
    if not result.ok or not result.added:
        return result, 0
    keep = {q.key for q in result.added} | {question_key(d) for d in result.duplicates}
    removed = 0
    for key in sorted(old - keep):
        removed += await store.quiz_banks.remove_question(topic_id, key)
    return result, removed
