"""Scrape a service host's /metrics and read its samples (prometheus_client's own parser)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager

import aiohttp
from prometheus_client.parser import text_string_to_metric_families
from prometheus_client.samples import Sample

from shared.runtime.service import ServiceContext, ServiceSpec, start_service, stop_service

Samples = dict[str, list[Sample]]


async def scrape(ctx: ServiceContext) -> Samples:
    """Every sample the service's /metrics serves now, by sample name."""
    assert ctx.obs is not None and ctx.obs.server is not None
    async with aiohttp.ClientSession() as http, http.get(f"{ctx.obs.server.url}/metrics") as resp:
        assert resp.status == 200
        text = await resp.text()
    found: Samples = {}
    for family in text_string_to_metric_families(text):
        for s in family.samples:
            found.setdefault(s.name, []).append(s)
    return found


def value(samples: Samples, name: str, **labels: str) -> float:
    """The sum of `name`'s samples carrying `labels` (0 when there is none)."""
    return sum(s.value for s in samples.get(name, []) if labels.items() <= s.labels.items())


def label_sets(samples: Samples, name: str, *keys: str) -> set[tuple[str, ...]]:
    """The distinct values of `keys` among `name`'s samples."""
    return {tuple(s.labels.get(k, "") for k in keys) for s in samples.get(name, [])}


@asynccontextmanager
async def hosted(
    name: str, spec: Callable[[ServiceContext], ServiceSpec[None]], *, namespace: str
) -> AsyncIterator[ServiceContext]:
    """A service started by the real host (environment from the test), stopped on exit."""
    ctx = await start_service(name, build=spec, namespace=namespace)
    try:
        yield ctx
    finally:
        await stop_service(ctx)
