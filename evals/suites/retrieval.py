"""Retrieval: labelled Dutch questions → expected topics, through R42's own KB snapshot.

The snapshot is what a chat turn searches (`services.r42.knowledge.load_snapshot` over the
store, then `index.search(question, k=10)` as `turn_context` does); the KB is the sample
handbook. Reports recall@10, hit@3 and MRR for Dutch, compound-word and English questions,
and how the relevance floor treats off-topic and real questions.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from evals.golden import Strict, limited, parse_model, read_jsonl
from evals.kb import load_handbook, temp_store
from evals.suite import MetricSpec, SuiteContext, SuiteOutcome
from shared.errors import BadInputError
from shared.kb import is_relevant

NAME = "retrieval"
SERVICE = "services.r42.knowledge"
PROMPT_MODULES: tuple[str, ...] = ()  # no model is called: retrieval is local BM25
K = 10
TOP = 3

_BASE = (
    ("recall@10", "share of expected topics among the top 10"),
    ("hit@3", "share of questions with an expected topic in the top 3"),
    ("mrr", "mean reciprocal rank of the first expected topic in the top 10"),
)
METRICS: tuple[MetricSpec, ...] = (
    *(MetricSpec(name, "higher", text) for name, text in _BASE),
    *(MetricSpec(f"compound.{name}", "higher", f"{text} (compound-word questions)")
      for name, text in _BASE),
    *(MetricSpec(f"en.{name}", "higher", f"{text} (English questions)") for name, text in _BASE),
    MetricSpec("offtopic.refused", "higher", "share of off-topic questions below the floor"),
    MetricSpec("ontopic.refused", "lower", "share of real questions wrongly below the floor"),
    MetricSpec("questions", None, "questions asked"),
)  # fmt: skip


class RetrievalCase(Strict):
    """One labelled question."""

    question: str = Field(min_length=1)
    expected: list[str] = Field(min_length=1)
    compound: bool = False
    lang: Literal["nl", "en"] = "nl"
    kind: Literal["plain", "plural", "one-word", "inflection", "paraphrase", "situation"] = "plain"


class OffTopicCase(Strict):
    """A question the handbook has no answer to: R42 must say so."""

    question: str = Field(min_length=1)
    lang: Literal["nl", "en"] = "nl"


def _scores(rows: list[tuple[RetrievalCase, list[str]]]) -> dict[str, float | None]:
    if not rows:
        return {"recall@10": None, "hit@3": None, "mrr": None}
    recall = hit = mrr = 0.0
    for case, ranked in rows:
        expected = set(case.expected)
        recall += len(expected & set(ranked[:K])) / len(expected)
        hit += bool(expected & set(ranked[:TOP]))
        first = next((i for i, topic_id in enumerate(ranked[:K]) if topic_id in expected), None)
        mrr += 0.0 if first is None else 1.0 / (first + 1)
    n = len(rows)
    return {"recall@10": recall / n, "hit@3": hit / n, "mrr": mrr / n}


async def run(ctx: SuiteContext) -> SuiteOutcome:
    """Ask every golden question and score the ranking."""
    from services.r42.knowledge import load_snapshot

    path = ctx.data_dir / "golden.jsonl"
    cases = [
        parse_model(RetrievalCase, row, where=f"{path} row {i}")
        for i, row in enumerate(read_jsonl(path), start=1)
    ]
    async with temp_store(ctx.workdir, NAME) as store:
        topics = await load_handbook(store)
        snapshot = await load_snapshot(store)
    known = {t.id for t in topics}
    unknown = sorted({e for case in cases for e in case.expected} - known)
    if unknown:
        raise BadInputError(f"{path}: expected topic ids not in the sample handbook: {unknown}")
    off_path = ctx.data_dir / "offtopic.jsonl"
    offtopic = [
        parse_model(OffTopicCase, row, where=f"{off_path} row {i}")
        for i, row in enumerate(read_jsonl(off_path), start=1)
    ]
    searched = [
        (case, snapshot.index.search(case.question, k=K)) for case in limited(cases, ctx.limit)
    ]
    rows = [(case, [hit.topic_id for hit in hits]) for case, hits in searched]
    outcome = SuiteOutcome(metrics={}, cases=len(rows))
    outcome.metrics.update(_scores([row for row in rows if row[0].lang == "nl"]))
    compound = _scores([row for row in rows if row[0].compound])
    outcome.metrics.update({f"compound.{name}": value for name, value in compound.items()})
    english = _scores([row for row in rows if row[0].lang == "en"])
    outcome.metrics.update({f"en.{name}": value for name, value in english.items()})
    asked = limited(offtopic, ctx.limit)
    answered = [case for case in asked if is_relevant(snapshot.index.search(case.question, k=K))]
    outcome.metrics["offtopic.refused"] = 1 - len(answered) / len(asked) if asked else None
    refused = [case for case, hits in searched if not is_relevant(hits)]
    outcome.metrics["ontopic.refused"] = len(refused) / len(searched) if searched else None
    for off in answered:
        outcome.fail(off.question, ["off-topic, yet above the relevance floor"])
    for case in refused:
        outcome.fail(case.question, ["on-topic, yet below the relevance floor"])
    outcome.metrics["questions"] = float(len(rows))
    for case, ranked in rows:
        if not set(case.expected) & set(ranked[:TOP]):
            outcome.fail(
                case.question,
                [f"expected {' | '.join(case.expected)} in the top {TOP}; got {ranked[:TOP]}"],
            )
    return outcome
