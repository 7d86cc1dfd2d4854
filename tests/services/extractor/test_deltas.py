"""kb.delta.decided: approve re-validates and applies once; reject records; redelivery is safe."""

from __future__ import annotations

from typing import Any

from services.extractor.deltas import apply_decision
from shared.bus import KbDelta, KbDeltaDecided
from shared.bus import Topic as BusTopic
from shared.store import KbChanges, Relation, Store, Suggestion, Topic

DELTA = KbDelta(
    reason="onboarding mist de buddy",
    topics=[
        BusTopic(id="buddy", label="Buddy", type="role"),
        BusTopic(id="Onboarding", label="Onboarding", type="process"),
    ],
    relations=[
        {"source": "onboarding", "target": "buddy", "type": "executed_by"},
        {"source": "buddy", "target": "spook", "type": "related_to"},
    ],
)


def decided(decision: str = "approved", sid: str = "s1") -> KbDeltaDecided:
    return KbDeltaDecided(
        suggestion_id=sid, decision=decision, decided_by="ADMIN", delta=DELTA, actor="gateway"
    )


async def setup(store: Store) -> list[Any]:
    await store.topics.upsert_many([Topic(id="onboarding", label="Onboarding", type="process")])
    await store.suggestions.create(
        Suggestion(id="s1", delta=DELTA.model_dump(mode="json"), proposed_by="U1")
    )
    return []


async def test_approval_revalidates_applies_and_is_idempotent(store: Store) -> None:
    published = await setup(store)

    async def publish(event: Any) -> None:
        published.append(event)

    event = decided()
    assert await apply_decision(store=store, event=event, publish=publish) == "applied"
    # "Onboarding" exists already (by label): only the new role and the valid relation land.
    assert await store.topics.ids() == {"onboarding", "buddy"}
    assert [(r.source, r.target, r.type) for r in await store.relations.list()] == [
        ("onboarding", "buddy", "executed_by")
    ]
    suggestion = await store.suggestions.get("s1")
    assert suggestion is not None and suggestion.status == "approved"
    assert [e.subject for e in published] == ["kb.updated"]
    assert await apply_decision(store=store, event=event, publish=publish) == "already_decided"
    reject = decided("rejected")
    assert await apply_decision(store=store, event=reject, publish=publish) == "already_decided"
    assert len(published) == 1


async def test_redelivery_after_a_crash_before_the_mark_adds_nothing_twice(store: Store) -> None:
    published = await setup(store)
    # The first delivery applied the delta, then the process died before marking it.
    await store.apply_kb_changes(
        KbChanges(
            topics_upsert=[Topic(id="buddy", label="Buddy", type="role")],
            relations_upsert=[Relation(source="onboarding", target="buddy", type="executed_by")],
        )
    )

    async def publish(event: Any) -> None:
        published.append(event)

    outcome = await apply_decision(store=store, event=decided(), publish=publish)
    assert outcome == "nothing_to_apply" and published == []
    assert await store.topics.ids() == {"onboarding", "buddy"}
    assert len(await store.relations.list()) == 1
    suggestion = await store.suggestions.get("s1")
    assert suggestion is not None and (suggestion.status, suggestion.decided_by) == (
        "approved",
        "ADMIN",
    )


async def test_rejection_changes_no_topic(store: Store) -> None:
    published = await setup(store)

    async def publish(event: Any) -> None:
        published.append(event)

    assert await apply_decision(store=store, event=decided("rejected"), publish=publish) == (
        "rejected"
    )
    assert await store.topics.ids() == {"onboarding"} and published == []
    suggestion = await store.suggestions.get("s1")
    assert suggestion is not None and suggestion.status == "rejected"
