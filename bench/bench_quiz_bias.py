"""Answer-position bias of generated quiz questions, before and after the service's shuffle.

The offline model always puts the correct answer FIRST (the worst bias a model can have).
Questions go through the real pipeline (forced tool call → validation → quality gate →
Fisher–Yates shuffle → dedup → SQLite bank) and the bench prints where the correct answers
ended up:

1. 50 questions over 5 topics: the share of correct answers per position (bar: no position
   above 40 %; a fair shuffle averages 25 %), and how often 200 reshuffles with other seeds
   would break that bar.
2. 1,000 questions over 100 topics: a chi-square test for uniformity (scipy.stats.chisquare).
3. Re-generation with the same model output: the bank must grow by 0.

Run: .venv/bin/python bench/bench_quiz_bias.py   (exits non-zero only if the run is broken)
"""

from __future__ import annotations

import asyncio
import random
import sys
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from scipy.stats import chisquare  # noqa: E402

from services.quiz.gate import shuffle_options  # noqa: E402
from services.quiz.generation import generate_questions  # noqa: E402
from services.quiz.models import TOOL_NAME, QuizQuestionsInput  # noqa: E402
from services.quiz.offline import offline_questions  # noqa: E402
from services.quiz.prompts import parse_request  # noqa: E402
from shared.config import build_settings  # noqa: E402
from shared.llm import (  # noqa: E402
    MemorySink,
    OfflinePlans,
    OfflineRequest,
    configure_llm,
    reset_llm,
)
from shared.store import Store, Topic, open_store  # noqa: E402

SEED = 20261129
BAR = 0.40
RESHUFFLES = 200
_WORDS = (
    "planning", "afspraken", "feedback", "begroting", "evaluatie", "documentatie",
    "verlofdagen", "declaratie", "toegangspas", "werkplek", "kennisdeling", "retrospective",
    "veiligheid", "wachtwoord", "klantbezoek", "opleiding", "salarisschaal", "pensioen",
)  # fmt: skip


def synthetic_topic(n: int) -> Topic:
    """A topic whose description yields ten distinct offline questions."""
    rng = random.Random(n)
    words = rng.sample(_WORDS, 6)
    sentences = [
        f"Bij onderwerp {n} regelt het team de {word} zelf en transparant." for word in words
    ]
    return Topic(
        id=f"onderwerp-{n}", label=f"Onderwerp {n}", type=rng.choice(["concept", "process"]),
        description=" ".join(sentences),
    )  # fmt: skip


class RecordingModel:
    """The offline quiz model, recording each raw tool input (or replaying the recorded ones)."""

    def __init__(self) -> None:
        self.outputs: dict[str, dict[str, Any]] = {}
        self.replay = False

    def __call__(self, request: OfflineRequest) -> dict[str, Any]:
        parsed = parse_request(request.user)
        assert parsed is not None, "the quiz prompt carries its request"
        if self.replay:
            return self.outputs[parsed.topic_id]
        output = {"questions": offline_questions(parsed, seed=request.seed)}
        self.outputs[parsed.topic_id] = output
        return output


def shares(positions: list[int]) -> list[float]:
    counts = Counter(positions)
    return [counts[i] / len(positions) for i in range(4)]


def fmt(values: list[float]) -> str:
    return "  ".join(f"{i}: {v:5.1%}" for i, v in enumerate(values))


async def bank_size(store: Store, topics: list[Topic]) -> int:
    """Questions held by the topics' banks."""
    total = 0
    for topic in topics:
        bank = await store.quiz_banks.get(topic.id)
        total += len(bank.questions) if bank else 0
    return total


async def generate_all(store: Store, topics: list[Topic], rng: random.Random) -> list[int]:
    """Generate ten questions per topic; the correct positions of what the bank stored."""
    await store.topics.upsert_many(topics)
    positions: list[int] = []
    for topic in topics:
        result = await generate_questions(store=store, topic_id=topic.id, count=10, rng=rng)
        if not result.ok:
            raise SystemExit(f"broken run: batch for {topic.id} rejected: {result.rejected}")
        positions += [q.correct_index for q in result.added]
    return positions


async def main() -> int:
    model = RecordingModel()
    configure_llm(build_settings(llm="offline"), sink=MemorySink(),
                  offline_plans=OfflinePlans(tools={TOOL_NAME: model}))  # fmt: skip
    broken: list[str] = []
    with tempfile.TemporaryDirectory() as tmp:
        store = await open_store(f"sqlite:///{tmp}/bench.db")
        try:
            # 1. 50 questions over 5 topics.
            small = [synthetic_topic(n) for n in range(5)]
            after = await generate_all(store, small, random.Random(SEED))
            raw = [
                q.correct_index
                for t in small
                for q in QuizQuestionsInput.model_validate(model.outputs[t.id]).questions
            ]
            print(f"position bias, {len(after)} questions over {len(small)} topics (seed {SEED})")
            print(f"  model output   {fmt(shares(raw))}   max {max(shares(raw)):.0%}")
            print(f"  after shuffle  {fmt(shares(after))}   max {max(shares(after)):.0%}"
                  f"   (bar <= {BAR:.0%}, fair = 25%)")  # fmt: skip
            if len(after) != 50 or max(shares(after)) > BAR:
                broken.append("the 50-question run breaks the 40 % bar")
            parsed = [
                q for t in small
                for q in QuizQuestionsInput.model_validate(model.outputs[t.id]).questions
            ]  # fmt: skip
            maxima = []
            for seed in range(RESHUFFLES):
                rng = random.Random(seed)
                maxima.append(max(shares([shuffle_options(q, rng).correct_index for q in parsed])))
            over = sum(m > BAR for m in maxima)
            print(f"  {RESHUFFLES} reshuffles: mean max share {sum(maxima) / len(maxima):.1%}, "
                  f"above the bar in {over} ({over / RESHUFFLES:.1%})")  # fmt: skip

            # 2. 1,000 questions over 100 topics.
            big = [synthetic_topic(n) for n in range(100, 200)]
            positions = await generate_all(store, big, random.Random(SEED + 1))
            counts = [Counter(positions)[i] for i in range(4)]
            stat, p_value = chisquare(counts)
            print(f"uniformity, {len(positions)} questions: counts {counts}, "
                  f"chi-square {stat:.2f}, p = {p_value:.3f}")  # fmt: skip
            biased = chisquare([len(positions), 0, 0, 0])
            print(f"  (the model's own output: all {len(positions)} at position 0, "
                  f"p = {biased.pvalue:.1e})")  # fmt: skip
            if len(positions) != 1000 or p_value < 0.001:
                broken.append(f"1,000 shuffled positions look non-uniform (p = {p_value:.2g})")

            # 3. The same model output again.
            model.replay = True
            before = await bank_size(store, small)
            dropped = 0
            for topic in small:
                result = await generate_questions(store=store, topic_id=topic.id, count=10)
                dropped += len(result.duplicates)
            grown = await bank_size(store, small) - before
            print(f"re-generation with the same model output grows the bank by {grown} "
                  f"({before} -> {before + grown} questions, {dropped} duplicates dropped)"
            )  # fmt: skip
            if grown != 0:
                broken.append(f"re-generation grew the bank by {grown}")
        finally:
            await store.close()
            reset_llm()
    for problem in broken:
        print(f"BROKEN: {problem}", file=sys.stderr)
    return 1 if broken else 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
