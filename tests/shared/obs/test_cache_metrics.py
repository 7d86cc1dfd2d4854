"""A call that reads its prompt prefix from the cache counts one r42_llm_cache_hits_total."""

from __future__ import annotations

import anthropic
from anthropic.types import Usage

from shared.llm import call_llm
from shared.llm.caching import cached_system, min_cacheable_tokens
from shared.runtime.service import ServiceContext, ServiceSpec
from tests.fakes.anthropic_server import FakeAnthropic
from tests.fakes.fixtures import FAKE_ANTHROPIC_API_KEY
from tests.shared.obs.scrape import hosted, scrape, value


def _nothing(ctx: ServiceContext) -> ServiceSpec[None]:
    del ctx
    return ServiceSpec(deps=None)


async def test_a_cache_read_counts_one_hit_and_a_cache_write_none(
    hosted_env: FakeAnthropic, unique: str
) -> None:
    fake, task = hosted_env, f"handbook-{unique}"
    async with hosted("obs", _nothing, namespace=f"n{unique}") as ctx:
        assert ctx.llm is not None
        model = ctx.llm.settings.model_standard
        catalogue = "Onderwerpen: pensioen, verlof en declaraties. " * (
            min_cacheable_tokens(model) // 6
        )  # a prefix the model caches (its floor is above the minimum)
        system = cached_system(catalogue)
        first = await call_llm(task=task, system=system, user="Hoeveel verlof?", max_tokens=64)
        samples = await scrape(ctx)
        assert first.usage.cache_creation_input_tokens > 0 == first.usage.cache_read_input_tokens
        assert value(samples, "r42_llm_cache_hits_total") == 0  # written, not read
        assert value(samples, "r42_llm_tokens_total", model=first.model, kind="cache_write") == (
            first.usage.cache_creation_input_tokens
        )

        second = await call_llm(task=task, system=system, user="En pensioen?", max_tokens=64)
        samples = await scrape(ctx)
        assert second.usage.cache_read_input_tokens == first.usage.cache_creation_input_tokens
        assert value(samples, "r42_llm_cache_hits_total", model=second.model) == 1
        assert value(samples, "r42_llm_calls_total", task=task, outcome="ok") == 2  # rate 1/2
        assert value(samples, "r42_llm_tokens_total", model=second.model, kind="cache_read") == (
            second.usage.cache_read_input_tokens
        )

        streamed: list[str] = []  # a chat turn streams: its cache figures count the same

        async def on_text(text: str) -> None:
            streamed.append(text)

        third = await call_llm(task=task, system=system, user="En declaraties?", max_tokens=64,
                               on_text=on_text)  # fmt: skip
        samples = await scrape(ctx)
        assert streamed and third.usage.cache_read_input_tokens > 0
        assert value(samples, "r42_llm_cache_hits_total", model=third.model) == 2
        assert value(samples, "r42_llm_calls_total", task=task, outcome="ok") == 3

    # The fake reports usage under the SDK's own field names (what the real API sends).
    sent = fake.requests[-1].body
    async with anthropic.AsyncAnthropic(base_url=fake.url, api_key=FAKE_ANTHROPIC_API_KEY) as sdk:
        direct = await sdk.messages.create(
            model=sent["model"], system=sent["system"], max_tokens=64,
            messages=[{"role": "user", "content": "En reiskosten?"}],
        )  # fmt: skip
    assert set(direct.usage.model_dump(exclude_unset=True)) <= set(Usage.model_fields)
    assert direct.usage.cache_read_input_tokens == second.usage.cache_read_input_tokens
