"""What the service host records: LLM calls, 429s, limiter waits, ingest progress, readiness."""

from __future__ import annotations

from pathlib import Path

import aiohttp
import pytest
from prometheus_client.parser import text_string_to_metric_families

from shared.bus import SourceCompleted, SourceProgress, publish_event
from shared.llm import call_llm
from shared.obs.host import Observability
from shared.runtime.service import ServiceContext, ServiceSpec, start_service, stop_service
from tests.fakes.anthropic_server import FakeAnthropic, rate_limited, text_reply
from tests.fakes.fixtures import FAKE_ANTHROPIC_API_KEY


async def _scrape(url: str) -> dict[str, list]:
    async with aiohttp.ClientSession() as http, http.get(f"{url}/metrics") as resp:
        assert resp.status == 200
        text = await resp.text()
    found: dict[str, list] = {}
    for family in text_string_to_metric_families(text):
        for s in family.samples:
            found.setdefault(s.name, []).append(s)
    return found


def _value(samples: dict[str, list], name: str, **labels: str) -> float:
    return sum(s.value for s in samples.get(name, []) if labels.items() <= s.labels.items())


def observed(ctx: ServiceContext) -> Observability:
    """The observability the host started for a service."""
    assert ctx.obs is not None
    return ctx.obs


@pytest.fixture
async def service(
    nats_url: str, unique: str, tmp_path: Path, fake_anthropic: FakeAnthropic,
    monkeypatch: pytest.MonkeyPatch,
):  # fmt: skip
    for key, value in {
        "NATS_URL": nats_url, "R42_STORE": f"sqlite:///{tmp_path / 's.db'}",
        "ANTHROPIC_BASE_URL": fake_anthropic.url, "ANTHROPIC_API_KEY": FAKE_ANTHROPIC_API_KEY,
        "R42_LLM": "anthropic", "R42_LIMITER": "local",
    }.items():  # fmt: skip
        monkeypatch.setenv(key, value)

    def build(ctx: ServiceContext) -> ServiceSpec[None]:
        del ctx
        return ServiceSpec(deps=None)

    ctx = await start_service("obs", build=build, namespace=f"n{unique}")
    try:
        yield ctx
    finally:
        await stop_service(ctx)


async def test_llm_calls_429s_and_limiter_waits(service, fake_anthropic: FakeAnthropic) -> None:
    fake_anthropic.enqueue(rate_limited(0.01), text_reply("Salarissen komen op de 25e."))
    result = await call_llm(task="payroll", tier="fast", user="Wanneer?", max_tokens=64)
    assert result.text
    model = result.model
    samples = await _scrape(observed(service).server.url)
    assert _value(samples, "r42_llm_calls_total", task="payroll", outcome="ok") == 1
    assert _value(samples, "r42_llm_http_errors_total", status="429", model=model) == 1
    assert _value(samples, "r42_llm_limiter_pauses_total", model="haiku") == 1
    assert _value(samples, "r42_llm_limiter_wait_seconds_count", model="haiku") == 2
    assert _value(samples, "r42_llm_tokens_total", kind="input") == result.usage.input_tokens > 0
    assert _value(samples, "r42_llm_cost_usd_total", task="payroll") == pytest.approx(
        result.cost_usd
    )
    assert _value(samples, "r42_llm_call_duration_seconds_count", model=model) == 1


async def test_ingest_progress_gauges_follow_a_source(service) -> None:
    ns, url = service.namespace, observed(service).server.url
    progress = SourceProgress(source_id="src-1", chunks_done=2, chunks_total=5, actor="t")
    await publish_event(service.broker, progress, namespace=ns)
    samples = await _scrape(url)
    assert _value(samples, "r42_ingest_chunks_done", source_id="src-1") == 2
    assert _value(samples, "r42_ingest_chunks_total", source_id="src-1") == 5
    done = SourceCompleted(source_id="src-1", chunks_done=5, chunks_total=5, duration=1.5,
                           actor="t")  # fmt: skip
    await publish_event(service.broker, done, namespace=ns)
    samples = await _scrape(url)
    assert not [s for s in samples.get("r42_ingest_chunks_done", [])
                if s.labels.get("source_id") == "src-1"]  # fmt: skip
    assert _value(samples, "r42_ingest_sources_finished_total", outcome="completed") == 1
    published = _value(samples, "faststream_published_messages_total", status="success")
    assert published >= 2


async def test_readyz_fails_once_nats_is_gone(service) -> None:
    server = observed(service).server
    async with aiohttp.ClientSession() as http:
        async with http.get(f"{server.url}/readyz") as resp:
            assert resp.status == 200
        await service.broker.stop()
        async with http.get(f"{server.url}/readyz") as resp:
            body = await resp.json()
            assert resp.status == 503
            assert body["checks"]["nats"] == "not connected" and body["ready"] is False
        async with http.get(f"{server.url}/healthz") as resp:
            assert resp.status == 200
