"""Fixtures and helpers for the extractor tests (real SQLite, NATS and fake servers)."""

from __future__ import annotations

import asyncio
import itertools
import json
import re
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager
from functools import partial
from pathlib import Path
from typing import Any

import nats
import pytest

from services.extractor.app import build
from services.extractor.config import ExtractOptions, ExtractorSettings
from services.extractor.offline import derive_graph, offline_plans
from services.extractor.prompts import split_document_message
from shared.bus import Event, parse_event, subscriptions_settled
from shared.config import build_settings
from shared.errors import BadInputError
from shared.llm import OfflineProvider
from shared.runtime.service import ServiceContext, start_service, stop_service
from shared.store import Store, open_store
from tests.fakes.anthropic_server import FakeAnthropic, Reply, tool_reply
from tests.fakes.fixtures import FAKE_ANTHROPIC_API_KEY

OPTIONS = ExtractOptions(max_chunk_chars=400, overlap_chars=0, output_retries=1)
_PART_RE = re.compile(r'part="(\d+)/(\d+)"')


@pytest.fixture
def offline_extractor(offline_llm: Any) -> Iterator[Any]:
    """The offline provider with the extractor's plans, as the service host injects them."""
    offline_llm.provider = OfflineProvider(offline_plans())
    yield offline_llm


@pytest.fixture
async def store(tmp_path: Path) -> AsyncIterator[Store]:
    """A fresh SQLite store."""
    opened = await open_store(f"sqlite:///{tmp_path / 'kb.db'}")
    yield opened
    await opened.close()


def user_text(body: Any) -> str:
    """The last user message of a recorded Messages API request."""
    content = body["messages"][-1]["content"]
    if isinstance(content, list):
        return "".join(b.get("text", "") for b in content if b.get("type") == "text")
    return str(content)


def chunk_position(body: Any) -> tuple[int, int]:
    """(index, count) of the chunk a recorded extraction request carries."""
    match = _PART_RE.search(user_text(body))
    assert match, "not an extraction request"
    return int(match.group(1)) - 1, int(match.group(2))


def kg(topics: list[dict[str, Any]], relations: list[dict[str, Any]] | None = None) -> Reply:
    """A scripted emit_knowledge_graph reply."""
    return tool_reply("emit_knowledge_graph", {"topics": topics, "relations": relations or []})


def topic(tid: str, label: str | None = None, **kw: Any) -> dict[str, Any]:
    """A tool-input topic."""
    return {
        "id": tid,
        "label": label or tid.replace("-", " ").title(),
        "type": "concept",
        "description": f"About {tid}.",
        "learning_relevance": "standard",
        **kw,
    }


def markdown_responder(tool: str = "emit_knowledge_graph") -> Callable[[Any], Reply]:
    """A fake default responder answering from the document's headings (deterministic)."""

    def respond(body: Any) -> Reply:
        parsed = split_document_message(user_text(body))
        assert parsed is not None, "no document in the request"
        name, document, known = parsed
        return tool_reply(tool, derive_graph(document, name=name, known_ids=known))

    return respond


def sections(n: int, *, prefix: str = "Onderwerp") -> str:
    """A markdown document of n sections, each about 300 characters (one chunk each)."""
    body = "Dit is een zin over het onderwerp met genoeg woorden om de sectie te vullen. " * 3
    return "\n\n".join(f"## {prefix} {i}\n{body.strip()}" for i in range(n)) + "\n"


class EventLog:
    """Every event published in a namespace, seen through a core NATS subscription."""

    def __init__(self, namespace: str) -> None:
        self.namespace = namespace
        self.events: list[Event] = []
        self._changed = asyncio.Event()
        self._nc: Any = None

    async def start(self, url: str) -> EventLog:
        """Connect and subscribe to everything in the namespace."""
        self._nc = await nats.connect(url)
        await self._nc.subscribe(f"{self.namespace}.>", cb=self._on)
        await subscriptions_settled(self._nc)
        return self

    async def _on(self, msg: Any) -> None:
        try:
            event = parse_event(msg.subject, msg.data, namespace=self.namespace)
        except BadInputError:
            return  # JetStream acks and other non-event traffic
        self.events.append(event)
        self._changed.set()

    def of(self, subject: str, source_id: str | None = None) -> list[Any]:
        """Events on a subject (optionally of one source)."""
        return [
            e
            for e in self.events
            if e.subject == subject
            and (source_id is None or getattr(e, "source_id", None) == source_id)
        ]

    async def wait_for(self, predicate: Callable[[], Any], timeout: float = 20.0) -> Any:  # noqa: ASYNC109
        """Wait until predicate() is truthy (checked after every event)."""
        async with asyncio.timeout(timeout):
            while not (result := predicate()):
                self._changed.clear()
                await self._changed.wait()
            return result

    async def close(self) -> None:
        """Disconnect."""
        if self._nc is not None:
            await self._nc.close()


@asynccontextmanager
async def running_extractor(
    *,
    nats_url: str,
    namespace: str,
    store_url: str,
    fake: FakeAnthropic | None = None,
    admins: tuple[str, ...] = (),
    **extractor: Any,
) -> AsyncIterator[ServiceContext]:
    """The extractor service in this process (fake Anthropic, or offline when fake is None)."""
    llm: dict[str, Any] = {"llm": "offline"}
    if fake is not None:
        llm = {
            "llm": "anthropic",
            "anthropic_base_url": fake.url,
            "anthropic_api_key": FAKE_ANTHROPIC_API_KEY,
        }
    settings = build_settings(
        nats_url=nats_url, store=store_url, limiter="off", admins=list(admins), **llm
    )
    ext = ExtractorSettings(
        **{"sample_handbook": False, "max_chunk_chars": 400, "overlap_chars": 0, **extractor}
    )
    ctx = await start_service(
        "extractor", build=partial(build, extractor=ext), settings=settings, namespace=namespace
    )
    try:
        yield ctx
    finally:
        await stop_service(ctx)


def request_json(fake: FakeAnthropic) -> list[Any]:
    """Bodies of the requests the fake received, in order."""
    return [r.body for r in fake.requests]


async def until(check: Callable[[], Any], timeout: float = 20.0) -> None:  # noqa: ASYNC109
    """Poll a condition (sync or async) for state that no event announces."""
    deadline = asyncio.get_running_loop().time() + timeout
    for _ in itertools.count():
        result = check()
        if asyncio.iscoroutine(result):
            result = await result
        if result:
            return
        if asyncio.get_running_loop().time() > deadline:
            raise TimeoutError(f"condition not met within {timeout} s")
        await asyncio.sleep(0.02)


def dumps(value: Any) -> str:
    """Stable JSON for comparing graphs."""
    return json.dumps(value, sort_keys=True, ensure_ascii=False)
