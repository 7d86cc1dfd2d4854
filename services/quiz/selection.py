"""Which questions a user's weekly quiz holds: the week's topic first, a mix of difficulties."""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass

from services.quiz.generation import GenerationResult
from services.quiz.models import DIFFICULTIES, Difficulty
from services.quiz.ports import QuizStore
from shared.errors import PermanentError, R42Error
from shared.kb.weekly import weekly_topic
from shared.store import QuizQuestion, Topic

log = logging.getLogger(__name__)

REF_SEPARATOR = "/"  # topic ids are kebab-case and question keys have no '/': unambiguous
Generate = Callable[[str], Awaitable[GenerationResult]]


class QuizUnavailableError(PermanentError):
    """No quiz can be started for this user and week; the message is meant for the user."""

    def __init__(self, message: str, *, attempt_id: str | None = None) -> None:
        super().__init__(message)
        self.attempt_id = attempt_id


@dataclass(frozen=True)
class PickedQuestion:
    """A bank question chosen for a quiz, with the topic it belongs to."""

    topic_id: str
    topic_label: str
    question: QuizQuestion

    @property
    def ref(self) -> str:
        """How an attempt refers to it: `topic-id/question key` (keys are unique per bank)."""
        return f"{self.topic_id}{REF_SEPARATOR}{self.question.key}"


def split_ref(ref: str) -> tuple[str, str]:
    """(topic id, question key) of an attempt's question reference."""
    topic_id, sep, key = ref.partition(REF_SEPARATOR)
    if not sep or not topic_id or not key:
        raise PermanentError(f"malformed question reference {ref!r} in a quiz attempt")
    return topic_id, key


def difficulty_targets(size: int) -> dict[Difficulty, int]:
    """How many questions of each difficulty a quiz of `size` wants (10 → 4 easy, 4, 2 hard)."""
    easy = medium = round(size * 0.4)
    return {"easy": easy, "medium": medium, "hard": max(0, size - easy - medium)}


def _stable(*parts: str) -> str:
    return hashlib.sha256("\x1f".join(parts).encode()).hexdigest()


def topic_order(
    *, user_id: str, week: str, topics: Sequence[Topic], curriculum_topic: str | None
) -> list[Topic]:
    """Eligible topics (not `exclude`): the week's topic first, then a stable per-user order."""
    eligible = [t for t in topics if t.learning_relevance != "exclude"]
    first = weekly_topic(
        user_id=user_id, week=week, topics=eligible, curriculum_topic=curriculum_topic
    )
    rest = sorted(
        (t for t in eligible if t.id != first), key=lambda t: _stable(user_id, week, t.id)
    )
    head = [t for t in eligible if t.id == first]
    return head + rest


def pick_mix(pool: Sequence[PickedQuestion], *, size: int) -> list[PickedQuestion]:
    """Up to `size` questions, ≈40/40/20 easy/medium/hard, filling any shortfall from the rest."""
    targets = difficulty_targets(size)
    chosen: list[int] = []
    for difficulty in DIFFICULTIES:
        matching = [i for i, p in enumerate(pool) if p.question.difficulty == difficulty]
        chosen += matching[: targets[difficulty]]
    if len(chosen) < size:  # a bank without hard questions still yields a full quiz
        taken = set(chosen)
        chosen += [i for i in range(len(pool)) if i not in taken][: size - len(chosen)]
    rank = {d: n for n, d in enumerate(DIFFICULTIES)}
    chosen.sort(key=lambda i: (rank[pool[i].question.difficulty], i))  # easy → hard
    return [pool[i] for i in chosen]


def _satisfied(pool: Sequence[PickedQuestion], size: int) -> bool:
    targets = difficulty_targets(size)
    have = {d: 0 for d in DIFFICULTIES}
    for picked in pool:
        have[picked.question.difficulty] += 1
    return all(have[d] >= targets[d] for d in DIFFICULTIES)


async def select_questions(
    *,
    store: QuizStore,
    user_id: str,
    week: str,
    size: int,
    generate: Generate | None = None,
    max_generations: int = 3,
) -> tuple[str, list[PickedQuestion]]:
    """(the week's topic id, the chosen questions); banks too small are generated on demand."""
    topics = await store.topics.list()
    curriculum = await store.curriculum.get(week)
    order = topic_order(user_id=user_id, week=week, topics=topics, curriculum_topic=curriculum)
    if not order:
        raise QuizUnavailableError(
            "Er zijn nog geen onderwerpen om een quiz over te maken; voeg eerst kennis toe."
        )
    pool: list[PickedQuestion] = []
    problems: list[str] = []
    transient: R42Error | None = None
    generations = 0
    for topic in order:
        bank = await store.quiz_banks.get(topic.id)
        questions = list(bank.questions) if bank else []
        if len(questions) < size and generate is not None and generations < max_generations:
            generations += 1
            try:
                result = await generate(topic.id)
            except R42Error as exc:  # other banks may still fill the quiz
                log.warning("on-demand quiz generation for %s failed: %s", topic.id, exc)
                problems.append(str(exc))
                transient = transient or (exc if exc.transient else None)
            else:
                if result.rejected:
                    problems.append(result.rejected)
                if result.added:
                    bank = await store.quiz_banks.get(topic.id)
                    questions = list(bank.questions) if bank else []
        questions.sort(key=lambda q: _stable(user_id, week, q.key))
        pool += [PickedQuestion(topic.id, topic.label, q) for q in questions]
        if _satisfied(pool, size):
            break
    if not pool:
        if transient is not None:
            raise transient  # worth retrying: the model may be back later
        detail = f" ({problems[0]})" if problems else ""
        raise QuizUnavailableError(f"Er zijn nog geen quizvragen beschikbaar{detail}.")
    return order[0].id, pick_mix(pool, size=size)
