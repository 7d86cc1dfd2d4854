"""The KG owner's topic card: sources (handbook files linked), relations, curated fields."""

from __future__ import annotations

import io
from pathlib import Path

from PIL import Image

from services.extractor.provenance import ADMIN, add_assertions
from services.extractor.topic_cards import handbook_url, topic_card
from services.gateway.core.topic_picture import neighbourhood_png
from shared.config import build_settings
from shared.store import KbChanges, Relation, Source, Topic, open_store


async def test_card_links_handbook_files_and_names_uploads(tmp_path: Path) -> None:
    settings = build_settings(store=f"sqlite:///{tmp_path / 'r42.db'}", handbook_owner="resp",
                              handbook_repo="handboek", handbook_path="docs",
                              handbook_branch="main")  # fmt: skip
    store = await open_store(settings.store_url)
    try:
        await store.apply_kb_changes(KbChanges(
            topics_upsert=[Topic(id="verlof", label="Verlof", type="process", relevance_locked=True,
                                 learning_relevance="core"),
                           Topic(id="hr-portaal", label="HR-portaal", type="concept")],
            relations_upsert=[Relation(source="hr-portaal", target="verlof", type="part_of")],
        ))  # fmt: skip
        await store.sources.create(Source(id="src-1", name="verlof.md", sha256="a" * 64))
        for asserter in ("handbook:hr/verlof aanvragen.md", "src-1", ADMIN):
            await add_assertions(store, asserter, topics=["verlof"], relations=[])
        await store.curation.mark("verlof", ["description"], by="UADMIN1")
        reply = await topic_card(store=store, settings=settings, query="verlof")
    finally:
        await store.close()
    card = reply.card
    assert card is not None
    assert [(s.name, s.url) for s in card.sources] == [
        ("hr/verlof aanvragen.md",
         "https://github.com/resp/handboek/blob/main/docs/hr/verlof%20aanvragen.md"),
        ("verlof.md", None),
        ("admin", None),
    ]  # fmt: skip
    assert [(r.type, r.outgoing, r.label) for r in card.relations] == [
        ("part_of", False, "HR-portaal")
    ]
    assert card.curated == ["description", "learning_relevance"]
    png = neighbourhood_png(card)
    assert png == neighbourhood_png(card)  # deterministic
    image = Image.open(io.BytesIO(png))
    assert (image.format, image.size) == ("PNG", (900, 900))


def test_no_handbook_configured_means_no_link() -> None:
    assert handbook_url(build_settings(), "a.md") is None
