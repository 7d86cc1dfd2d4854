"""Extraction: Dutch source texts → topics, through the extractor's own pipeline.

Every case gets a fresh temp store; its documents are registered with
`services.extractor.uploads.register_upload` and extracted with
`services.extractor.local.ingest_locally` (chunking, the forced emit_knowledge_graph call,
the merge step and source completion, exactly as the service runs them, minus the bus).
The graph that results is checked against the case's expectations.
"""

from __future__ import annotations

from pydantic import Field

from evals.golden import (
    OneOf,
    Strict,
    describe_one_of,
    limited,
    met,
    parse_model,
    read_yaml,
    share,
    with_override,
)
from evals.kb import temp_store
from evals.suite import MetricSpec, SuiteContext, SuiteOutcome, Tally
from shared.store import Store, Topic, TopicType

NAME = "extraction"
SERVICE = "services.extractor.pipeline"
PROMPT_MODULES = ("services.extractor.prompts",)
ACTOR = "eval"

METRICS: tuple[MetricSpec, ...] = (
    MetricSpec("topic_recall", "higher", "share of expected topics (any alternative) extracted"),
    MetricSpec("type_accuracy", "higher", "share of expected topic types that match"),
    MetricSpec("relation_recall", "higher", "share of expected relations extracted"),
    MetricSpec("cases_passed", "higher", "share of cases meeting every expectation"),
    MetricSpec("forbidden_topics", "lower", "topics extracted that a case forbids"),
    MetricSpec("sources_failed", "lower", "sources that did not complete"),
    MetricSpec("max_tokens_stops", "lower", "extraction calls cut off at max_tokens"),
    MetricSpec("prompt_version_stamped", "higher",
               "share of topics whose metadata carries the running PROMPT_VERSION"),
    MetricSpec("topics", None, "topics extracted over all cases"),
    MetricSpec("chunks", None, "chunks extracted over all cases"),
)  # fmt: skip


class Expectations(Strict):
    """What the graph must look like after a case (see golden.yaml's header)."""

    expect_topics: list[OneOf] = Field(default_factory=list)
    expect_types: dict[str, TopicType] = Field(default_factory=dict)
    expect_relations: list[tuple[OneOf, OneOf, OneOf]] = Field(default_factory=list)
    forbid_topics: list[str] = Field(default_factory=list)
    min_topics: int = Field(default=1, ge=0)
    max_topics: int | None = Field(default=None, ge=1)
    min_chunks: int = Field(default=1, ge=1)


class Document(Strict):
    """One uploaded source."""

    name: str = Field(min_length=1)
    text: str = Field(min_length=1)


class ExtractionCase(Expectations):
    """A golden case: documents, chunking settings, expectations and provider overrides."""

    id: str = Field(min_length=1)
    documents: list[Document] = Field(min_length=1)
    max_chunk_chars: int | None = Field(default=None, ge=200)
    overlap_chars: int | None = Field(default=None, ge=0)
    offline: Expectations | None = None
    anthropic: Expectations | None = None

    def expectations(self, provider: str) -> Expectations:
        """The default expectations with the provider's block applied."""
        base = Expectations.model_validate(self.model_dump(include=set(Expectations.model_fields)))
        return with_override(base, getattr(self, provider, None))


class ExtractionGolden(Strict):
    """evals/extraction/golden.yaml."""

    cases: list[ExtractionCase] = Field(min_length=1)


async def _extract(ctx: SuiteContext, store: Store, case: ExtractionCase) -> list[str]:
    """Upload and extract a case's documents; returns the reasons any source did not complete."""
    from services.extractor.config import ExtractOptions, build_extractor_settings
    from services.extractor.local import ingest_locally
    from services.extractor.uploads import register_upload

    overrides = {}
    if case.max_chunk_chars is not None:
        overrides["max_chunk_chars"] = case.max_chunk_chars
    if case.overlap_chars is not None:
        overrides["overlap_chars"] = case.overlap_chars
    settings = build_extractor_settings(**overrides)  # the service's own settings (and env)
    options = ExtractOptions(
        max_chunk_chars=settings.max_chunk_chars, overlap_chars=settings.overlap_chars,
        output_retries=settings.output_retries, max_output_tokens=settings.max_output_tokens,
    )  # fmt: skip
    source_ids = []
    for doc in case.documents:
        registration = await register_upload(
            store, name=doc.name, text=doc.text, uploaded_by=ACTOR, actor=ACTOR
        )
        if registration.source is not None:
            source_ids.append(registration.source.id)
    await ingest_locally(store=store, source_ids=source_ids, limiter=ctx.llm.limiter,
                         options=options)  # fmt: skip
    problems = []
    for source_id in source_ids:
        source = await store.sources.get(source_id)
        if source is None or source.status != "completed":
            status = source.status if source else "missing"
            problems.append(f"source {source.name if source else source_id} {status}: "
                            f"{source.error if source else ''}".rstrip(": "))  # fmt: skip
    return problems


def graph_problems(
    want: Expectations,
    topics: dict[str, Topic],
    relations: set[tuple[str, str, str]],
    chunks: int,
    tally: Tally,
) -> list[str]:
    """Where the extracted graph misses the expectations (counting checks into the tally)."""
    reasons = []
    for expected in want.expect_topics:
        if not tally.add("topics", met(expected, topics)):
            reasons.append(f"missing topic {describe_one_of(expected)}")
    for topic_id, kind in want.expect_types.items():
        found = topics.get(topic_id)
        if not tally.add("types", found is not None and found.type == kind):
            reasons.append(f"{topic_id} should be a {kind}, is "
                           f"{found.type if found else 'missing'}")  # fmt: skip
    for source, kind, target in want.expect_relations:
        hit = any(met(source, [s]) and met(kind, [k]) and met(target, [t])
                  for s, t, k in relations)  # fmt: skip
        if not tally.add("relations", hit):
            reasons.append(f"missing relation {describe_one_of(source)} "
                           f"{describe_one_of(kind)} {describe_one_of(target)}")  # fmt: skip
    bad = sorted(set(want.forbid_topics) & set(topics))
    reasons += [f"forbidden topic(s) {bad}"] if bad else []
    if len(topics) < want.min_topics:
        reasons.append(f"{len(topics)} topic(s), at least {want.min_topics} expected")
    if want.max_topics is not None and len(topics) > want.max_topics:
        reasons.append(f"{len(topics)} topic(s), at most {want.max_topics} expected: "
                       f"{sorted(topics)}")  # fmt: skip
    if chunks < want.min_chunks:
        reasons.append(f"{chunks} chunk(s), at least {want.min_chunks} expected")
    return reasons


async def run(ctx: SuiteContext) -> SuiteOutcome:
    """Extract every case and score the graphs."""
    from services.extractor.offline import offline_plans

    with ctx.llm.offline_plans(offline_plans()):  # as the extractor's host injects them
        return await _run(ctx)


async def _run(ctx: SuiteContext) -> SuiteOutcome:
    from services.extractor.prompts import PROMPT_VERSION

    path = ctx.data_dir / "golden.yaml"
    golden = parse_model(ExtractionGolden, read_yaml(path), where=str(path))
    cases = limited(golden.cases, ctx.limit)
    outcome = SuiteOutcome(metrics={}, cases=len(cases))
    tally = Tally()
    failed = stops = topics_total = chunks = stamped = passed = forbidden = 0
    for number, case in enumerate(cases):
        want = case.expectations(ctx.provider)
        mark = len(ctx.llm.sink.records)
        async with temp_store(ctx.workdir, f"case-{number}") as store:
            reasons = await _extract(ctx, store, case)
            failed += len(reasons)
            topics = {t.id: t for t in await store.topics.list()}
            relations = {r.as_tuple() for r in await store.relations.list()}
            sources = await store.sources.list()
        calls = ctx.llm.records_since(mark)
        cut = [c for c in calls if c.stop_reason == "max_tokens"
               or (c.error_msg or "").startswith("LLMTruncatedError")]  # fmt: skip
        stops += len(cut)
        reasons += [f"{len(cut)} call(s) stopped at max_tokens"] if cut else []
        topics_total += len(topics)
        stamped += sum(1 for t in topics.values() if t.metadata.prompt_version == PROMPT_VERSION)
        case_chunks = sum(s.chunks_total or 0 for s in sources)
        chunks += case_chunks
        forbidden += len(set(want.forbid_topics) & set(topics))
        reasons += graph_problems(want, topics, relations, case_chunks, tally)
        passed += not reasons
        outcome.fail(case.id, reasons)
    outcome.metrics = {
        "topic_recall": tally.rate("topics"),
        "type_accuracy": tally.rate("types"),
        "relation_recall": tally.rate("relations"),
        "cases_passed": share(passed, len(cases)),
        "forbidden_topics": float(forbidden),
        "sources_failed": float(failed),
        "max_tokens_stops": float(stops),
        "prompt_version_stamped": share(stamped, topics_total),
        "topics": float(topics_total),
        "chunks": float(chunks),
    }
    return outcome
