"""Proposals: the validation table (valid, invalid dropped, caps) and the decision rules."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest

from services.r42.knowledge import KbCache
from services.r42.proposals import (
    PROPOSAL_TTL,
    decide_proposal,
    save_proposal,
    suggestion_id_for,
)
from services.r42.turn import chat_turn
from shared.bus import (
    ChatRequest,
    Event,
    KbDeltaDecided,
    KbDeltaProposed,
    ProposalDecisionRequest,
    derived_event_id,
)
from shared.errors import BadInputError, BusError, TransientError
from shared.kb import GraphDelta
from shared.llm import LLMRuntime
from shared.store import Store, utcnow
from tests.fakes.anthropic_server import FakeAnthropic, text_reply, tool_reply
from tests.services.r42.conftest import kb_dump, tool_results

NEW_ROLE = {"id": "scrum-master", "label": "Scrum master", "type": "role",
            "description": "Begeleidt het team in scrum."}  # fmt: skip


def _topics(n: int) -> list[dict[str, Any]]:
    return [{"id": f"nieuw-{i}", "label": f"Nieuw {i}", "type": "concept"} for i in range(n)]


def _relations(n: int) -> list[dict[str, Any]]:
    targets = ["verlof", "declaraties", "product-owner", "sprint-review", "onboarding-buddy",
               "radicale-transparantie", "verlof"]  # fmt: skip
    return [{"source": "nieuw-0", "target": targets[i], "type": "related_to"} for i in range(n)]


# (tool input, expected topic ids, expected relation count) — None: the delta is dropped.
TABLE: list[tuple[str, dict[str, Any], tuple[list[str], int] | None]] = [
    ("valid role with relation",
     {"reason": "Ontbreekt", "topics": [NEW_ROLE],
      "relations": [{"source": "sprint-review", "target": "scrum-master", "type": "executed_by"}]},
     (["scrum-master"], 1)),
    ("legacy executes is flipped",
     {"reason": "r", "relations": [{"source": "product-owner", "target": "verlof",
                                    "type": "executes"}]},
     ([], 1)),
    ("no reason", {"topics": [NEW_ROLE]}, None),
    ("unknown topic type", {"reason": "r", "topics": [{**NEW_ROLE, "type": "team"}]}, None),
    ("topic without a type", {"reason": "r", "topics": [{"id": "x-y", "label": "X y"}]}, None),
    ("relation to unknown ids", {"reason": "r", "relations": [
        {"source": "bestaat-niet", "target": "verlof", "type": "related_to"}]}, None),
    ("unknown relation type", {"reason": "r", "relations": [
        {"source": "verlof", "target": "declaraties", "type": "owns"}]}, None),
    ("only an existing topic", {"reason": "r", "topics": [
        {"id": "verlof", "label": "Verlof", "type": "process"}]}, None),
    ("a deletion request", {"reason": "weg ermee", "delete_topics": ["verlof"],
                            "topics_delete": ["verlof"]}, None),
    ("topic cap", {"reason": "r", "topics": _topics(5)}, (["nieuw-0", "nieuw-1", "nieuw-2"], 0)),
    ("relation cap", {"reason": "r", "topics": _topics(1), "relations": _relations(7)},
     (["nieuw-0"], 5)),
]  # fmt: skip


@pytest.mark.parametrize(
    ("tool_input", "expected"), [t[1:] for t in TABLE], ids=[t[0] for t in TABLE]
)
async def test_proposal_validation_table(
    store: Store,
    kb: KbCache,
    fake_anthropic: FakeAnthropic,
    fake_llm: LLMRuntime,
    tool_input: dict[str, Any],
    expected: tuple[list[str], int] | None,
) -> None:
    before = await kb_dump(store)
    fake_anthropic.enqueue(
        tool_reply("propose_graph_delta", tool_input, tool_id="p1"), text_reply("Goed.")
    )
    reply = await chat_turn(store=store, kb=kb, request=ChatRequest(user_id="U1", text="x"))
    (result,) = tool_results(fake_anthropic.requests[1])
    assert await kb_dump(store) == before  # a proposal never changes the KB by itself
    if expected is None:
        assert reply.proposal is None
        assert result["is_error"] is True and "niets veranderd" in result["content"]
        assert await store.proposals.list() == []
        return
    topic_ids, relation_count = expected
    assert not result.get("is_error")
    assert reply.proposal is not None
    assert [t.id for t in reply.proposal.delta.topics] == topic_ids
    assert len(reply.proposal.delta.relations) == relation_count
    stored = await store.proposals.get(reply.proposal.id)
    assert stored is not None and stored.status == "open" and stored.proposed_by == "U1"
    assert stored.delta == reply.proposal.delta.model_dump(mode="json")
    assert stored.created_at and stored.prompt_version


async def test_one_proposal_per_turn(
    store: Store, kb: KbCache, fake_anthropic: FakeAnthropic, fake_llm: LLMRuntime
) -> None:
    valid = {"reason": "r", "topics": [NEW_ROLE]}
    fake_anthropic.enqueue(
        tool_reply("propose_graph_delta", valid, tool_id="p1"),
        tool_reply("propose_graph_delta", {"reason": "r", "topics": _topics(1)}, tool_id="p2"),
        text_reply("Klaar."),
    )
    reply = await chat_turn(store=store, kb=kb, request=ChatRequest(user_id="U1", text="x"))
    (second,) = tool_results(fake_anthropic.requests[2])
    assert second["is_error"] is True
    assert reply.proposal is not None and [t.id for t in reply.proposal.delta.topics] == [
        "scrum-master"
    ]


# -- decisions ------------------------------------------------------------------------------


class Recorder:
    """A publish callable that records events (and can fail on demand)."""

    def __init__(self) -> None:
        self.events: list[Event] = []
        self.fail = False

    async def __call__(self, event: Event) -> None:
        if self.fail:
            raise BusError("bus down")
        self.events.append(event)


async def _proposal(store: Store, user: str = "U1") -> str:
    delta = GraphDelta.model_validate({"reason": "Ontbreekt", "topics": [NEW_ROLE]})
    return (await save_proposal(store=store, delta=delta, proposed_by=user)).id


def _decision(pid: str, user: str = "U1", *, accept: bool = True) -> Any:
    return ProposalDecisionRequest(proposal_id=pid, user_id=user, accept=accept)


async def test_user_accept_queues_for_review(store: Store) -> None:
    pid, publish = await _proposal(store), Recorder()
    reply = await decide_proposal(store=store, publish=publish, request=_decision(pid))
    assert reply.status == "pending_review" and reply.suggestion_id == suggestion_id_for(pid)
    suggestion = await store.suggestions.get(reply.suggestion_id)
    assert suggestion is not None and suggestion.status == "pending"
    assert suggestion.proposed_by == "U1" and suggestion.context["proposal_id"] == pid
    (event,) = publish.events
    assert isinstance(event, KbDeltaProposed)
    assert event.suggestion_id == reply.suggestion_id and event.proposed_by == "U1"
    assert [t.id for t in event.delta.topics] == ["scrum-master"]
    again = await decide_proposal(store=store, publish=publish, request=_decision(pid))
    assert again.status == "already_decided" and again.suggestion_id == reply.suggestion_id
    assert len(publish.events) == 1


async def test_admin_accept_applies_at_once(store: Store) -> None:
    pid, publish = await _proposal(store, user="A1"), Recorder()
    reply = await decide_proposal(
        store=store, publish=publish, request=_decision(pid, "A1"), admins=["A1"]
    )
    assert reply.status == "applied"
    proposed, decided = publish.events
    assert isinstance(proposed, KbDeltaProposed) and isinstance(decided, KbDeltaDecided)
    assert decided.decision == "approved" and decided.decided_by == "A1"
    assert decided.suggestion_id == proposed.suggestion_id == reply.suggestion_id
    assert decided.delta == proposed.delta
    # Pending until the KG owner applies it and decides it (compare-and-set, who and when).
    assert (await store.suggestions.get(reply.suggestion_id)).status == "pending"  # type: ignore[union-attr]


async def test_admin_status_comes_from_the_admin_list_only(store: Store) -> None:
    pid, publish = await _proposal(store), Recorder()
    reply = await decide_proposal(
        store=store, publish=publish, request=_decision(pid), admins=["A1"]
    )
    assert reply.status == "pending_review"
    assert [type(e) for e in publish.events] == [KbDeltaProposed]


async def test_decline_stores_nothing(store: Store) -> None:
    pid, publish = await _proposal(store), Recorder()
    reply = await decide_proposal(
        store=store, publish=publish, request=_decision(pid, accept=False)
    )
    assert reply.status == "declined" and reply.suggestion_id is None
    assert publish.events == [] and await store.suggestions.list() == []
    accept = await decide_proposal(store=store, publish=publish, request=_decision(pid))
    assert accept.status == "already_decided"


async def test_unknown_expired_and_foreign_proposals(store: Store) -> None:
    publish = Recorder()
    missing = await decide_proposal(store=store, publish=publish, request=_decision("prop-nope"))
    assert missing.status == "not_found"
    assert (
        await decide_proposal(store=store, publish=publish, request=_decision("prop-other"))
    ).status == "not_found"
    pid = await _proposal(store)
    later = utcnow() + PROPOSAL_TTL + timedelta(minutes=1)
    expired = await decide_proposal(store=store, publish=publish, request=_decision(pid), now=later)
    assert expired.status == "not_found"
    with pytest.raises(BadInputError, match="only the user"):
        await decide_proposal(store=store, publish=publish, request=_decision(pid, "U2"))
    assert publish.events == [] and await store.suggestions.list() == []


async def test_forwarding_failure_reopens_and_a_retry_is_idempotent(store: Store) -> None:
    pid, publish = await _proposal(store), Recorder()
    publish.fail = True
    with pytest.raises(TransientError):
        await decide_proposal(store=store, publish=publish, request=_decision(pid))
    reopened = await store.proposals.get(pid)
    assert reopened is not None and reopened.status == "open"
    publish.fail = False
    reply = await decide_proposal(store=store, publish=publish, request=_decision(pid))
    assert reply.status == "pending_review"
    (event,) = publish.events
    # The same event id as the failed attempt would have used: JetStream dedupes re-publishes.
    assert event.event_id == derived_event_id(KbDeltaProposed.SUBJECT, reply.suggestion_id or "")
    assert len(await store.suggestions.list()) == 1
