"""Contract: sources, source texts, content and quiz banks, on every adapter."""

from __future__ import annotations

import asyncio

import pytest

from shared.errors import BadInputError, NotFoundError
from shared.store import Content, QuizQuestion, Source, Store

SHA_A, SHA_B = "a" * 64, "b" * 64


async def test_source_lifecycle(store: Store) -> None:
    created = await store.sources.create(Source(id="s1", name="values.md", sha256=SHA_A, who="U1"))
    assert (created.status, created.chunks_done, created.who) == ("pending", 0, "U1")
    # Creating again (a redelivered upload) returns what is stored, unchanged.
    await store.sources.set_status("s1", "processing")
    again = await store.sources.create(Source(id="s1", name="other.md", sha256=SHA_B))
    assert (again.name, again.status) == ("values.md", "processing")

    await asyncio.sleep(0.01)
    await store.sources.create(Source(id="s2", name="roles.md", sha256=SHA_A))
    await store.sources.create(Source(id="s3", name="b.md", sha256=SHA_B))
    assert [s.id for s in await store.sources.find_by_sha256(SHA_A)] == ["s2", "s1"]
    assert [s.id for s in await store.sources.list(status="processing")] == ["s1"]
    assert len(await store.sources.list(limit=2)) == 2
    assert await store.sources.count_by_status() == {"processing": 1, "pending": 2}

    total = await store.sources.set_chunks_total("s1", 7)
    assert total.chunks_total == 7
    failed = await store.sources.set_status("s1", "failed", error="LLM refused")
    assert failed is not None and (failed.status, failed.error) == ("failed", "LLM refused")
    with pytest.raises(NotFoundError):
        await store.sources.set_status("ghost", "failed")
    with pytest.raises(NotFoundError):
        await store.sources.set_chunks_total("ghost", 1)


async def test_source_status_compare_and_set(store: Store) -> None:
    await store.sources.create(Source(id="s1", name="a.md", sha256=SHA_A))
    done = await store.sources.set_status("s1", "completed", only_from={"processing"})
    assert done is None  # still pending: refused
    assert (await store.sources.get("s1")).status == "pending"  # type: ignore[union-attr]
    cancel = store.sources.set_status("s1", "cancelled", only_from={"pending", "processing"})
    start = store.sources.set_status("s1", "processing", only_from={"pending"})
    results = await asyncio.gather(cancel, start)
    assert sum(r is not None for r in results) == 1  # exactly one transition won


async def test_source_delete_removes_text_and_chunks(store: Store) -> None:
    await store.sources.create(Source(id="s1", name="a.md", sha256=SHA_A))
    await store.source_texts.put("s1", "# Values\nWe are open.")
    await store.source_texts.put("s1", "# Values\nWe are radically open.")
    assert await store.source_texts.get("s1") == "# Values\nWe are radically open."
    assert await store.sources.delete("s1") is True
    assert await store.sources.get("s1") is None
    assert await store.source_texts.get("s1") is None
    assert await store.sources.merged_chunks("s1") == set()
    assert await store.sources.delete("s1") is False
    assert await store.source_texts.delete("s1") is False


async def test_content_parts_staleness(store: Store) -> None:
    assert await store.content.get("scrum") is None
    article = {"title": "Scrum", "sections": [{"heading": "Why", "body": "$ and . are fine"}]}
    got = await store.content.set_part(
        "scrum", "article", article, prompt_version="content-v3", topic_fingerprint="f1"
    )
    assert got.article == article and got.slides is None and not got.stale
    slides = {"slides": [{"title": "Sprint"}]}
    got = await store.content.set_part(
        "scrum", "slides", slides, prompt_version="content-v3", topic_fingerprint="f1"
    )
    assert (got.article, got.slides, got.topic_fingerprint) == (article, slides, "f1")
    assert got.generated_at is not None
    await store.content.put(Content(topic_id="okr", infographic={"nodes": []}))
    assert await store.content.mark_stale(["scrum", "okr", "ghost"]) == 2
    assert await store.content.mark_stale(["scrum"]) == 0  # already stale
    assert await store.content.list_stale() == ["okr", "scrum"]
    await store.content.set_part(
        "scrum", "infographic", {"nodes": [1]}, prompt_version=None, topic_fingerprint="f2"
    )
    assert await store.content.list_stale() == ["okr"]
    listed = await store.content.list()
    assert [c.topic_id for c in listed] == ["okr", "scrum"]
    assert listed[1].article == article and listed[1].infographic == {"nodes": [1]}
    with pytest.raises(BadInputError):
        await store.content.set_part(
            "scrum", "video", {}, prompt_version=None, topic_fingerprint=None
        )  # type: ignore[arg-type]
    assert await store.content.delete("okr") is True
    assert await store.content.get("okr") is None


async def test_content_of_many_topics_comes_in_one_read(store: Store) -> None:
    for topic_id in ("verlof", "scrum", "okr"):
        await store.content.set_part(
            topic_id, "article", {"title": topic_id.title()}, prompt_version="content-v3",
            topic_fingerprint=f"f-{topic_id}",
        )  # fmt: skip
    await store.content.put(Content(topic_id="laptop", slides={"slides": [{"title": "Dia"}]}))
    got = await store.content.get_many(["verlof", "ghost", "laptop", "okr", "verlof"])
    assert [c.topic_id for c in got] == ["laptop", "okr", "verlof"]  # existing ones, id order
    by_id = {c.topic_id: c for c in got}
    assert by_id["verlof"] == await store.content.get("verlof")  # the same rows get() reads
    assert by_id["laptop"].slides == {"slides": [{"title": "Dia"}]}
    assert by_id["laptop"].article is None
    assert by_id["okr"].topic_fingerprint == "f-okr"
    assert await store.content.get_many([]) == []
    assert await store.content.get_many(iter(["ghost"])) == []


def q(text: str, **kw: object) -> QuizQuestion:
    data = {"text": text, "options": ["yes", "no", "maybe"], "correct_index": 0, **kw}
    return QuizQuestion.model_validate(data)


async def test_quiz_bank_dedups_by_normalised_key(store: Store) -> None:
    first = await store.quiz_banks.add_questions(
        "scrum", [q("What is a sprint?", difficulty="easy"), q("Who owns the backlog?")]
    )
    assert [x.key for x in first] == ["what is a sprint", "who owns the backlog"]
    added = await store.quiz_banks.add_questions(
        "scrum", [q("  what is a SPRINT "), q("Wat is een retro?"), q("Wát is een retro!")]
    )
    assert [x.text for x in added] == ["Wat is een retro?"]
    bank = await store.quiz_banks.get("scrum")
    assert bank is not None
    assert [x.key for x in bank.questions] == [
        "what is a sprint",
        "who owns the backlog",
        "wat is een retro",
    ]
    assert [x.difficulty for x in bank.questions] == ["easy", "medium", "medium"]
    assert await store.quiz_banks.remove_question("scrum", "who owns the backlog") is True
    assert await store.quiz_banks.remove_question("scrum", "who owns the backlog") is False
    assert len((await store.quiz_banks.get("scrum")).questions) == 2  # type: ignore[union-attr]
    assert await store.quiz_banks.get("okr") is None
    assert await store.quiz_banks.delete("scrum") is True
    assert await store.quiz_banks.get("scrum") is None


async def test_concurrent_adds_of_the_same_question_keep_one(store: Store) -> None:
    adds = [store.quiz_banks.add_questions("okr", [q("What is an OKR?")]) for _ in range(8)]
    results = await asyncio.gather(*adds)
    assert sum(len(r) for r in results) == 1
    assert len((await store.quiz_banks.get("okr")).questions) == 1  # type: ignore[union-attr]
