"""What an admin command (the CLI) works with: the store, the bus if a stack runs, the LLM."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

from faststream.nats import NatsBroker

from services.extractor.config import ExtractOptions, build_extractor_settings
from services.extractor.offline import offline_plans
from services.extractor.outcomes import Publish
from shared.bus import Event, NatsAuth, build_broker, publish_event
from shared.config import Settings
from shared.llm import Limiter, LocalLimiter, configure_llm, get_runtime, open_limiter, reset_llm
from shared.runtime import check_nats
from shared.runtime.service import live_nats_url
from shared.runtime.session import client_auth
from shared.store import Store, open_store

__all__ = ["AdminSession", "admin_session", "extract_options", "live_nats_url"]


def extract_options() -> ExtractOptions:
    """Extraction options as the extractor service uses them (R42_EXTRACTOR_*)."""
    return build_extractor_settings().options


@dataclass
class AdminSession:
    """The store; `publish`/`broker` when a stack runs (else None); the limiter with an LLM."""

    store: Store
    nats_url: str | None
    namespace: str
    broker: NatsBroker | None = None
    publish: Publish | None = None
    limiter: Limiter | None = None

    @property
    def connection(self) -> Any:
        """The nats-py connection (for core subscriptions); only with a running stack."""
        assert self.broker is not None, "no stack is running"
        return self.broker.connection


async def _connect(session: AdminSession, url: str, auth: NatsAuth | None) -> None:
    await check_nats(url, auth=auth)  # a clear error instead of reconnecting forever
    broker = build_broker(url, name="r42-cli", auth=auth)
    session.broker = broker
    await asyncio.wait_for(broker.connect(), 10)

    async def publish(event: Event) -> None:
        await publish_event(broker, event, namespace=session.namespace)

    session.publish = publish


@contextlib.asynccontextmanager
async def admin_session(settings: Settings, *, llm: bool = False) -> AsyncIterator[AdminSession]:
    """Open the store, connect to the running stack if any, configure the LLM if asked."""
    url = live_nats_url(settings)
    # The extractor's namespace: empty in production, set by tests sharing one server.
    namespace = build_extractor_settings().bus_namespace
    if settings.store is None:
        settings.data_dir.mkdir(parents=True, exist_ok=True)  # the default SQLite file's home
    session = AdminSession(store=await open_store(settings.store_url), nats_url=url,
                           namespace=namespace)  # fmt: skip
    try:
        auth = client_auth(settings)
        if url is not None:
            await _connect(session, url, auth)
        if llm:
            # Calls made here share the stack's budget when one runs.
            if settings.limiter == "nats" and url is not None:
                session.limiter = await open_limiter(
                    mode="nats", nats_url=url, connect_options=auth.options() if auth else None
                )
            elif settings.limiter != "off":
                session.limiter = LocalLimiter()
            configure_llm(settings, limiter=session.limiter, offline_plans=offline_plans())
        yield session
    finally:
        if llm:
            with contextlib.suppress(Exception):
                await get_runtime().aclose()
            reset_llm()
        closer = getattr(session.limiter, "aclose", None)
        if closer is not None:
            with contextlib.suppress(Exception):
                await closer()
        if session.broker is not None:
            with contextlib.suppress(Exception):
                await session.broker.stop()
        await session.store.close()
