"""kb.delta.decided: approve re-validates and applies once; reject records; redelivery is safe."""

from __future__ import annotations

from typing import Any

import pytest

from services.extractor.deltas import apply_decision
from shared.bus import KbDelta, KbDeltaDecided
from shared.bus import Topic as BusTopic
from shared.errors import BadInputError
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


ADMINS = frozenset({"ADMIN"})


async def decide(store: Store, event: KbDeltaDecided, publish: Any) -> str:
    """apply_decision with the owner's admin list of these tests."""
    return await apply_decision(
        store=store, event=event, publish=publish, is_admin=ADMINS.__contains__
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
    assert await decide(store, event, publish) == "applied"
    # "Onboarding" exists already (by label): only the new role and the valid relation land.
    assert await store.topics.ids() == {"onboarding", "buddy"}
    assert [(r.source, r.target, r.type) for r in await store.relations.list()] == [
        ("onboarding", "buddy", "executed_by")
    ]
    suggestion = await store.suggestions.get("s1")
    assert suggestion is not None and suggestion.status == "approved"
    assert [e.subject for e in published] == ["kb.updated"]
    assert await decide(store, event, publish) == "already_decided"
    reject = decided("rejected")
    assert await decide(store, reject, publish) == "already_decided"
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

    outcome = await decide(store, decided(), publish)
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

    assert await apply_decision(
        store=store, event=decided("rejected"), publish=publish, is_admin=ADMINS.__contains__
    ) == ("rejected")
    assert await store.topics.ids() == {"onboarding"} and published == []
    suggestion = await store.suggestions.get("s1")
    assert suggestion is not None and suggestion.status == "rejected"


async def test_a_decider_outside_the_admin_list_is_refused_and_nothing_changes(
    store: Store,
) -> None:
    await setup(store)
    forged = KbDeltaDecided(suggestion_id="s1", decision="approved", decided_by="nobody",
                            delta=DELTA, actor="gateway")  # fmt: skip
    with pytest.raises(BadInputError, match="not an admin"):
        await apply_decision(
            store=store, event=forged, publish=_never, is_admin=ADMINS.__contains__
        )
    with pytest.raises(BadInputError, match="not an admin"):  # an empty list: nobody
        await apply_decision(
            store=store, event=decided(), publish=_never, is_admin=frozenset[str]().__contains__
        )
    assert await store.topics.ids() == {"onboarding"}
    suggestion = await store.suggestions.get("s1")
    assert suggestion is not None and suggestion.status == "pending"


async def test_a_decision_without_a_stored_suggestion_is_refused(store: Store) -> None:
    await setup(store)
    made_up = decided(sid="never-proposed")
    with pytest.raises(BadInputError, match="no stored suggestion"):
        await apply_decision(
            store=store, event=made_up, publish=_never, is_admin=ADMINS.__contains__
        )
    assert await store.topics.ids() == {"onboarding"}
    assert await store.suggestions.get("never-proposed") is None


async def test_the_stored_delta_is_applied_not_the_events(store: Store) -> None:
    await setup(store)
    swapped = KbDelta(reason="forged", topics=[BusTopic(id="forged", label="F", type="concept")])
    event = KbDeltaDecided(suggestion_id="s1", decision="approved", decided_by="ADMIN",
                           delta=swapped, actor="gateway")  # fmt: skip
    published: list[Any] = []

    async def publish(e: Any) -> None:
        published.append(e)

    assert await decide(store, event, publish) == ("applied")
    assert "forged" not in await store.topics.ids() and "buddy" in await store.topics.ids()


async def _never(event: Any) -> None:
    raise AssertionError(f"nothing may be published, got {event!r}")


async def test_the_owner_reports_each_outcome_once(store: Store) -> None:
    from services.extractor.handlers import delta_failed, on_delta_decided

    published = await setup(store)

    async def publish(event: Any) -> None:
        published.append(event)

    class Deps:
        def __init__(self) -> None:
            self.store, self.publish = store, publish

        def is_admin(self, user: str) -> bool:
            return user in ADMINS

    event = decided()
    await on_delta_decided(Deps(), event)
    await on_delta_decided(Deps(), event)  # a redelivery
    reports = [e for e in published if e.SUBJECT == "kb.delta.applied"]
    assert len(reports) == 1  # the redelivery found it decided and reported nothing new
    report = reports[0]
    assert (report.outcome, report.topics, report.relations) == ("applied", 1, 1)
    assert (report.proposed_by, report.decided_by) == ("U1", "ADMIN")
    assert report.correlation_id == event.correlation_id

    failed = delta_failed(event, "store unreachable")
    assert (failed.outcome, failed.error, failed.suggestion_id) == (
        "failed",
        "store unreachable",
        "s1",
    )
    assert failed.event_id != report.event_id
