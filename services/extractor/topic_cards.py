"""A topic's card from the KG owner: the topic, the sources asserting it, its relations."""

from __future__ import annotations

from urllib.parse import quote

from services.extractor.curation import curated_fields, curation_marks
from services.extractor.ports import ExtractorStore
from services.extractor.provenance import ADMIN, asserters_of_topic
from shared.bus.topic_rpc import TopicCard, TopicCardReply, TopicNeighbour, TopicSourceRef
from shared.config import Settings
from shared.kb import match_label
from shared.store import Topic

HANDBOOK = "handbook:"
MAX_RELATIONS = 60


def handbook_url(settings: Settings, name: str) -> str | None:
    """The GitHub page of a handbook file (None when no handbook is configured)."""
    if not (settings.handbook_owner and settings.handbook_repo):
        return None
    root = settings.handbook_path.strip("/")
    path = f"{root}/{name}" if root else name
    return (
        f"https://github.com/{quote(settings.handbook_owner)}/{quote(settings.handbook_repo)}"
        f"/blob/{quote(settings.handbook_branch)}/{quote(path)}"
    )


async def _source_refs(
    store: ExtractorStore, settings: Settings, asserters: list[str]
) -> list[TopicSourceRef]:
    refs = []
    for asserter in asserters:
        if asserter == ADMIN:
            refs.append(TopicSourceRef(id=ADMIN, name="admin"))
        elif asserter.startswith(HANDBOOK):
            name = asserter.removeprefix(HANDBOOK)
            refs.append(TopicSourceRef(id=asserter, name=name, url=handbook_url(settings, name)))
        else:
            source = await store.sources.get(asserter)
            refs.append(TopicSourceRef(id=asserter, name=source.name if source else asserter))
    return sorted(refs, key=lambda r: (r.id == ADMIN, r.name))


async def find_topic(store: ExtractorStore, query: str) -> Topic | None:
    """A topic by id, else by label (exact, prefix, contains; accents folded), shortest first."""
    query = query.strip()
    if not query:
        return None
    if (topic := await store.topics.get(query)) is not None:
        return topic
    return match_label(await store.topics.list(), query)


async def topic_card(*, store: ExtractorStore, settings: Settings, query: str) -> TopicCardReply:
    """The card of the topic a query names (card None when none matches)."""
    topic = await find_topic(store, query)
    if topic is None:
        return TopicCardReply()
    relations = await store.relations.list(topic_id=topic.id)
    others = {r.target if r.source == topic.id else r.source for r in relations}
    labels = {t.id: t.label for t in await store.topics.get_many(others)}
    neighbours = [
        TopicNeighbour(type=r.type, outgoing=r.source == topic.id, topic_id=other,
                       label=labels[other])
        for r in relations[:MAX_RELATIONS]
        if (other := r.target if r.source == topic.id else r.source) in labels
    ]  # fmt: skip
    marks = await curation_marks(store, [topic.id])
    return TopicCardReply(
        card=TopicCard(
            topic=topic,
            sources=await _source_refs(store, settings, await asserters_of_topic(store, topic.id)),
            relations=neighbours,
            curated=sorted(curated_fields(topic, marks.get(topic.id, ()))),
        )
    )
