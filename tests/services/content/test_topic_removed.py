"""A topic the KG owner removes (kb.updated removed_ids) takes its content along, once."""

from __future__ import annotations

from services.content import app
from shared.bus import KbUpdated
from tests.services.content.test_flow import Running, service  # noqa: F401 - the fixture

TOPIC = "open-boek"


async def test_removed_topic_loses_its_content_over_the_bus(service: Running) -> None:  # noqa: F811
    store = service.ctx.store
    await store.content.set_part(TOPIC, "article", {"title": "Open boek"}, prompt_version="t",
                                 topic_fingerprint=None)  # fmt: skip
    await store.content.set_part("keep-me", "article", {"title": "Blijft"}, prompt_version="t",
                                 topic_fingerprint=None)  # fmt: skip
    update = KbUpdated(actor="extractor", kb_hash="abcd1234", removed_ids=[TOPIC], reason="test")
    await service.publish(update)
    await service.publish(update.model_copy(update={"event_id": update.event_id}))  # a re-send
    await service.settled(app.KB_DURABLE, update.subject, delivered=1)
    assert await store.content.get(TOPIC) is None
    assert await store.content.get("keep-me") is not None
