"""The eval's knowledge base: the bundled sample handbook loaded into a temp SQLite store."""

from __future__ import annotations

import contextlib
import importlib.util
from collections.abc import AsyncIterator
from pathlib import Path

from shared.errors import BadInputError
from shared.kb import KbTopic, topics_from_markdown
from shared.store import Store, Topic, TopicMetadata, open_store


def sample_handbook_dir() -> Path:
    """The sample handbook bundled with the extractor service."""
    spec = importlib.util.find_spec("services.extractor")
    if spec is None or not spec.submodule_search_locations:
        raise BadInputError("services.extractor is not installed: no sample handbook")
    return Path(next(iter(spec.submodule_search_locations))) / "sample_handbook"


def handbook_topics(directory: Path | None = None) -> list[KbTopic]:
    """Every topic of the sample handbook, file by file in name order (one per `##`)."""
    directory = directory or sample_handbook_dir()
    files = sorted(directory.glob("*.md"))
    if not files:
        raise BadInputError(f"no sample handbook files in {directory}")
    topics: list[KbTopic] = []
    for path in files:
        topics.extend(topics_from_markdown(path.read_text(encoding="utf-8"), source=path.name))
    return topics


def store_topics(topics: list[KbTopic]) -> list[Topic]:
    """KB topics as store topics (their file as provenance)."""
    return [
        Topic(
            id=topic.id,
            label=topic.label,
            type=topic.type,  # type: ignore[arg-type]
            description=topic.description,
            metadata=TopicMetadata(source=topic.source),
        )
        for topic in topics
    ]


@contextlib.asynccontextmanager
async def temp_store(workdir: Path, name: str) -> AsyncIterator[Store]:
    """A fresh SQLite store in the run's work dir, closed afterwards."""
    store = await open_store(f"sqlite:///{(workdir / f'{name}.db').resolve()}")
    try:
        yield store
    finally:
        await store.close()


async def load_handbook(store: Store) -> list[Topic]:
    """Put the sample handbook's topics into the store; returns them."""
    topics = store_topics(handbook_topics())
    await store.topics.upsert_many(topics)
    return topics
