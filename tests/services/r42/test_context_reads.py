"""A turn's KB context reads the content of all its topics in one store query."""

from __future__ import annotations

import sqlite3

from services.r42.knowledge import load_snapshot, turn_context
from shared.store import Content, Store
from shared.store.sqlite import SqliteStore


async def test_turn_context_reads_every_hit_s_content_in_one_query(store: Store) -> None:
    for topic_id in ("declaraties", "sprint-review", "product-owner"):
        body = {"title": topic_id, "sections": [{"heading": "Kort", "body": f"Over {topic_id}."}]}
        await store.content.put(Content(topic_id=topic_id, article=body))
    snapshot = await load_snapshot(store)
    assert isinstance(store, SqliteStore)
    statements: list[str] = []

    def trace(conn: sqlite3.Connection) -> None:
        conn.set_trace_callback(statements.append)

    await store.db.read(trace)  # the store's own connection, on its worker thread
    try:
        question = "Wie leidt de sprint review, hoe declareer ik en hoe vraag ik verlof aan?"
        context = await turn_context(store=store, snapshot=snapshot, question=question)
    finally:
        await store.db.read(lambda conn: conn.set_trace_callback(None))
    content_reads = [s for s in statements if "FROM content" in s]
    assert len(content_reads) == 1, content_reads
    assert {"verlof", "sprint-review", "declaraties"} <= set(context.topic_ids)
    assert "Open het HR-portaal" in context.text  # verlof's article excerpt
    assert "Over sprint-review." in context.text and "Over declaraties." in context.text
