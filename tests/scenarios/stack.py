"""The whole system in-process for scenario tests: real services, one namespace, one store."""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

from services.content import app as content_app
from services.extractor import app as extractor_app
from services.extractor.config import build_extractor_settings
from services.quiz import app as quiz_app
from services.r42 import app as r42_app
from shared.config import Settings
from shared.runtime.service import ServiceContext, start_service
from shared.store import KbChanges, Relation, Topic, open_store
from tests.fakes.slack_server import FakeSlack
from tests.services.gateway.harness import Gateway, gateway_settings, start_gateway, stop_all

SERVICES = ("r42", "extractor", "quiz", "content")

TOPICS = [
    Topic(
        id="verlof",
        label="Verlof",
        type="process",
        learning_relevance="core",
        description="Verlof vraag je minstens twee weken vooraf aan in het HR-portaal. "
        "Je manager keurt het verzoek goed.",
    ),
    Topic(
        id="hr-portaal",
        label="HR-portaal",
        type="concept",
        description="Het HR-portaal is de plek voor verlof, ziekmeldingen en declaraties.",
    ),
    Topic(
        id="declaraties",
        label="Declaraties",
        type="process",
        description="Onkosten declareer je binnen dertig dagen met een foto van de bon.",
    ),
    Topic(
        id="teamlead",
        label="Teamlead",
        type="role",
        description="De teamlead begeleidt het team en keurt verlof en declaraties goed.",
    ),
]
RELATIONS = [
    Relation(source="verlof", target="hr-portaal", type="depends_on"),
    Relation(source="declaraties", target="hr-portaal", type="depends_on"),
    Relation(source="verlof", target="teamlead", type="executed_by"),
]


@dataclass
class Stack:
    """A running system: the gateway plus the real r42, extractor, quiz and content services."""

    gateway: Gateway
    services: dict[str, ServiceContext] = field(default_factory=dict)
    settings: Settings | None = None

    @property
    def store(self):
        """The shared store (through the gateway's connection)."""
        return self.gateway.ctx.store


async def seed(
    settings: Settings, topics: Iterable[Topic] = TOPICS, relations: Iterable[Relation] = RELATIONS
) -> None:
    """Write a small knowledge graph before the services start (they load it at start)."""
    store = await open_store(settings.store_url)
    try:
        await store.apply_kb_changes(
            KbChanges(topics_upsert=list(topics), relations_upsert=list(relations))
        )
    finally:
        await store.close()


def stack_settings(*, nats_url: str, tmp_path: Path, fake: FakeSlack) -> Settings:
    """Settings shared by every service of the stack (offline LLM, temp SQLite)."""
    return gateway_settings(nats_url=nats_url, tmp_path=tmp_path, fake=fake)


async def start_stack(
    settings: Settings,
    *,
    fake: FakeSlack,
    namespace: str,
    services: Iterable[str] = SERVICES,
    max_chunk_chars: int = 400,
) -> Stack:
    """Start the chosen services, then the gateway, all in one namespace."""
    extractor = build_extractor_settings(
        sample_handbook=False, max_chunk_chars=max_chunk_chars, overlap_chars=0
    )
    builds = {
        "r42": r42_app.build,
        "extractor": partial(extractor_app.build, extractor=extractor),
        "quiz": quiz_app.build,
        "content": content_app.build,
    }
    started: dict[str, ServiceContext] = {}
    try:
        for name in services:
            started[name] = await start_service(
                name, build=builds[name], settings=settings, namespace=namespace
            )
        gateway = await start_gateway(settings, fake=fake, namespace=namespace)
    except BaseException:
        await stop_all(*started.values())
        raise
    gateway.others.extend(started.values())
    return Stack(gateway=gateway, services=started, settings=settings)


async def stop_stack(stack: Stack) -> None:
    """Stop the gateway first (it drains), then the services, then drop the namespace."""
    await stop_all(stack.gateway.ctx, *stack.gateway.others)


async def eventually(fetch, done, *, timeout: float = 15.0):  # noqa: ASYNC109
    """Poll `fetch()` until `done(value)`; the last value (the assertion after it says why)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while True:
        value = await fetch()
        if done(value) or loop.time() > deadline:
            return value
        await asyncio.sleep(0.05)
