"""What the service host records: LLM calls, 429s, limiter waits, ingest progress, readiness."""

from __future__ import annotations

from collections.abc import AsyncIterator

import aiohttp
import pytest

from shared.bus import SourceCompleted, SourceProgress, publish_event
from shared.llm import call_llm
from shared.llm.errors import LLMHttpError
from shared.obs.server import ObsServer
from shared.runtime.service import ServiceContext, ServiceSpec
from tests.fakes.anthropic_server import FakeAnthropic, error_reply, rate_limited, text_reply
from tests.shared.obs.scrape import hosted, scrape, value


def _nothing(ctx: ServiceContext) -> ServiceSpec[None]:
    del ctx
    return ServiceSpec(deps=None)


@pytest.fixture
async def service(hosted_env: FakeAnthropic, unique: str) -> AsyncIterator[ServiceContext]:
    async with hosted("obs", _nothing, namespace=f"n{unique}") as ctx:
        yield ctx


async def test_llm_calls_429s_and_limiter_waits(
    service: ServiceContext, fake_anthropic: FakeAnthropic
) -> None:
    fake_anthropic.enqueue(rate_limited(0.01), text_reply("Salarissen komen op de 25e."))
    result = await call_llm(task="payroll", tier="fast", user="Wanneer?", max_tokens=64)
    assert result.text
    model = result.model
    samples = await scrape(service)
    assert value(samples, "r42_llm_calls_total", task="payroll", outcome="ok") == 1
    assert value(samples, "r42_llm_http_errors_total", status="429", model=model) == 1
    assert value(samples, "r42_llm_limiter_pauses_total", model="haiku") == 1
    assert value(samples, "r42_llm_limiter_wait_seconds_count", model="haiku") == 2
    assert value(samples, "r42_llm_tokens_total", kind="input") == result.usage.input_tokens > 0
    assert value(samples, "r42_llm_cost_usd_total", task="payroll") == pytest.approx(
        result.cost_usd
    )
    assert value(samples, "r42_llm_call_duration_seconds_count", model=model) == 1


async def test_ingest_progress_gauges_follow_a_source(service: ServiceContext) -> None:
    ns = service.namespace
    progress = SourceProgress(source_id="src-1", chunks_done=2, chunks_total=5, actor="t")
    await publish_event(service.broker, progress, namespace=ns)
    samples = await scrape(service)
    assert value(samples, "r42_ingest_chunks_done", source_id="src-1") == 2
    assert value(samples, "r42_ingest_chunks_total", source_id="src-1") == 5
    done = SourceCompleted(source_id="src-1", chunks_done=5, chunks_total=5, duration=1.5,
                           actor="t")  # fmt: skip
    await publish_event(service.broker, done, namespace=ns)
    samples = await scrape(service)
    assert not [s for s in samples.get("r42_ingest_chunks_done", [])
                if s.labels.get("source_id") == "src-1"]  # fmt: skip
    assert value(samples, "r42_ingest_sources_finished_total", outcome="completed") == 1
    published = value(samples, "faststream_published_messages_total", status="success")
    assert published >= 2


async def test_readyz_fails_once_nats_is_gone(service: ServiceContext) -> None:
    server = _server(service)
    async with aiohttp.ClientSession() as http:
        async with http.get(f"{server.url}/readyz") as resp:
            assert resp.status == 200
        assert value(await scrape(service), "r42_service_ready") == 1
        await service.broker.stop()
        async with http.get(f"{server.url}/readyz") as resp:
            body = await resp.json()
            assert resp.status == 503
            assert body["checks"]["nats"] == "not connected" and body["ready"] is False
        async with http.get(f"{server.url}/healthz") as resp:
            assert resp.status == 200
    assert value(await scrape(service), "r42_service_ready") == 0  # for an alert on the gauge


def _server(ctx: ServiceContext) -> ObsServer:
    assert ctx.obs is not None and ctx.obs.server is not None
    return ctx.obs.server


async def test_a_failed_call_counts_as_an_error_without_tokens(
    service: ServiceContext, fake_anthropic: FakeAnthropic
) -> None:
    fake_anthropic.enqueue(
        error_reply(400, "invalid_request_error", "max_tokens: must be at most 64000")
    )
    with pytest.raises(LLMHttpError):
        await call_llm(task="quiz", tier="fast", user="Maak een vraag.", max_tokens=64)
    samples = await scrape(service)
    assert value(samples, "r42_llm_calls_total", task="quiz", outcome="error") == 1
    assert value(samples, "r42_llm_calls_total", task="quiz", outcome="ok") == 0
    (model,) = {s.labels["model"] for s in samples["r42_llm_http_errors_total"]}
    assert value(samples, "r42_llm_http_errors_total", status="400", model=model) == 1
    assert value(samples, "r42_llm_tokens_total") == value(samples, "r42_llm_cost_usd_total") == 0
    assert value(samples, "r42_llm_call_duration_seconds_count", model=model) == 1
