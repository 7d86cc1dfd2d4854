"""Quiz: questions for five handbook topics through the quiz service's generation path.

Each topic's batch goes through `services.quiz.generation.generate_questions` (forced tool
call → quality gate → option shuffle → dedup → bank) against a temp store holding the
sample handbook; the stored banks are then checked against the rubric: correct-answer
positions, explanation length, banned phrases, difficulty mix, near-duplicates, and the
prompt version on every question.
"""

from __future__ import annotations

import difflib
import itertools
import random
import re
from collections import Counter

from pydantic import Field

from evals.golden import Strict, parse_model, read_yaml, share
from evals.kb import load_handbook, temp_store
from evals.suite import MetricSpec, SuiteContext, SuiteOutcome
from shared.errors import BadInputError
from shared.kb import fold_text
from shared.store import QuizQuestion, normalise_question_key

NAME = "quiz"
SERVICE = "services.quiz.generation"
PROMPT_MODULES = ("services.quiz.prompts",)
POSITIONS = 4

METRICS: tuple[MetricSpec, ...] = (
    MetricSpec("topics_ok", "higher", "share of topics whose batch passed with enough questions"),
    MetricSpec("questions", None, "questions stored over all topics"),
    MetricSpec("rejected_batches", "lower", "batches rejected by validation or the quality gate"),
    MetricSpec("correct_index_max_share", "lower",
               "largest share of stored questions with the correct answer at one position"),
    MetricSpec("model_position_max_share", None,
               "the same before the service's shuffle (the model's own position bias)"),
    MetricSpec("explanation_mean_chars", "higher", "mean explanation length in characters"),
    MetricSpec("banned_phrase_hits", "lower", "questions containing a banned phrase"),
    MetricSpec("difficulty_mix_deviation", "lower",
               "largest gap between a difficulty's share and its target share"),
    MetricSpec("difficulty_coverage", "higher", "share of topics with every difficulty"),
    MetricSpec("near_duplicate_pairs", "lower", "pairs of near-identical questions in a bank"),
    MetricSpec("prompt_version_stamped", "higher",
               "share of stored questions carrying the running PROMPT_VERSION"),
)  # fmt: skip


class QuizGolden(Strict):
    """The quiz golden set (evals/quiz/golden.yaml)."""

    count: int = Field(ge=1, le=20)
    min_questions: int = Field(ge=1)
    topics: list[str] = Field(min_length=1)
    difficulty_target: dict[str, float]
    near_duplicate_ratio: float = Field(gt=0, le=1)
    banned_phrases: list[str] = Field(default_factory=list)


def banned_hits(question: QuizQuestion, phrases: list[str]) -> list[str]:
    """The banned phrases a question's text, options or explanation contain (whole words)."""
    text = fold_text(" \n ".join([question.text, *question.options, question.explanation]))
    return [
        phrase for phrase in phrases
        if re.search(rf"(?<!\w){re.escape(fold_text(phrase))}(?!\w)", text)
    ]  # fmt: skip


def near_duplicates(questions: list[QuizQuestion], ratio: float) -> list[tuple[str, str]]:
    """Pairs of questions whose normalised texts are at least `ratio` similar."""
    keys = [(q.text, normalise_question_key(q.text)) for q in questions]
    return [
        (a_text, b_text)
        for (a_text, a), (b_text, b) in itertools.combinations(keys, 2)
        if difflib.SequenceMatcher(None, a, b).ratio() >= ratio
    ]


def max_share(positions: list[int]) -> float | None:
    """The largest share of any answer position."""
    if not positions:
        return None
    counts = Counter(positions)
    return max(counts.get(i, 0) for i in range(POSITIONS)) / len(positions)


def _model_positions(tool_uses: list[dict]) -> list[int]:
    positions = []
    for block in tool_uses:
        for question in (block.get("input") or {}).get("questions") or []:
            if isinstance(question, dict) and isinstance(question.get("correct_index"), int):
                positions.append(question["correct_index"])
    return positions


async def run(ctx: SuiteContext) -> SuiteOutcome:
    """Generate a batch per golden topic and score the banks against the rubric."""
    from services.quiz.offline import offline_plans

    with ctx.llm.offline_plans(offline_plans()):  # as the quiz service's host injects them
        return await _run(ctx)


async def _run(ctx: SuiteContext) -> SuiteOutcome:
    from services.quiz.generation import generate_questions
    from services.quiz.prompts import PROMPT_VERSION

    path = ctx.data_dir / "golden.yaml"
    golden = parse_model(QuizGolden, read_yaml(path), where=str(path))
    topic_ids = golden.topics[: ctx.limit] if ctx.limit else golden.topics
    rng = random.Random(ctx.seed)
    outcome = SuiteOutcome(metrics={}, cases=len(topic_ids))
    stored: list[QuizQuestion] = []
    raw_positions: list[int] = []
    ok = rejected = covered = duplicates = 0
    async with temp_store(ctx.workdir, NAME) as store:
        known = {t.id for t in await load_handbook(store)}
        missing = [t for t in topic_ids if t not in known]
        if missing:
            raise BadInputError(f"{path}: topics not in the sample handbook: {missing}")
        for topic_id in topic_ids:
            mark = ctx.llm.recorder.mark()
            result = await generate_questions(
                store=store, topic_id=topic_id, count=golden.count, rng=rng
            )
            raw_positions += _model_positions(ctx.llm.recorder.tool_uses_since(mark))
            bank = await store.quiz_banks.get(topic_id)
            questions = list(bank.questions) if bank else []
            stored += questions
            reasons = []
            if result.rejected is not None:
                rejected += 1
                reasons.append(f"batch rejected: {result.rejected}")
            if len(questions) < golden.min_questions:
                reasons.append(
                    f"{len(questions)} question(s) stored, {golden.min_questions} needed"
                )
            ok += not reasons
            levels = {q.difficulty for q in questions}
            if levels >= set(golden.difficulty_target):
                covered += 1
            else:
                reasons.append(f"difficulties {sorted(levels)} miss some of "
                               f"{sorted(golden.difficulty_target)}")  # fmt: skip
            pairs = near_duplicates(questions, golden.near_duplicate_ratio)
            duplicates += len(pairs)
            reasons += [f"near-duplicates: {a!r} ~ {b!r}" for a, b in pairs]
            for question in questions:
                hits = banned_hits(question, golden.banned_phrases)
                if hits:
                    reasons.append(f"banned {hits} in {question.text!r}")
            outcome.fail(topic_id, reasons)
    difficulties = Counter(q.difficulty for q in stored)
    deviation = (
        max(abs(difficulties.get(level, 0) / len(stored) - target)
            for level, target in golden.difficulty_target.items())
        if stored else None
    )  # fmt: skip
    explanation = sum(len(q.explanation) for q in stored) / len(stored) if stored else None
    outcome.metrics = {
        "topics_ok": share(ok, len(topic_ids)),
        "questions": float(len(stored)),
        "rejected_batches": float(rejected),
        "correct_index_max_share": max_share([q.correct_index for q in stored]),
        "model_position_max_share": max_share(raw_positions),
        "explanation_mean_chars": explanation,
        "banned_phrase_hits": float(
            sum(1 for q in stored if banned_hits(q, golden.banned_phrases))
        ),
        "difficulty_mix_deviation": deviation,
        "difficulty_coverage": share(covered, len(topic_ids)),
        "near_duplicate_pairs": float(duplicates),
        "prompt_version_stamped": share(
            sum(1 for q in stored if q.prompt_version == PROMPT_VERSION), len(stored)
        ),
    }
    return outcome
