"""Admin reviews in Slack: the ephemeral list updates in place, cards wait for the KG owner."""

from __future__ import annotations

import json

import pytest

from services.gateway.slack import ids
from services.gateway.slack.blocks.kit import block_problems
from shared.bus import KbDelta, KbDeltaApplied, KbDeltaDecided, Relation, Topic, publish_event
from shared.store import Suggestion
from tests.fakes.slack_server import FakeSlack
from tests.services.gateway.conftest import Tap
from tests.services.gateway.harness import ADMIN, ADMIN_CHANNEL, USER, Gateway

PROPOSER = "UPROPOSER1"


def delta(n: int) -> KbDelta:
    return KbDelta(
        reason=f"Voorstel {n}",
        topics=[
            Topic(
                id=f"onderwerp-{n}",
                label=f"Onderwerp {n}",
                type="concept",
                description=f"Beschrijving {n}: " + "woord " * 120 + "EINDE",
            )
        ],
        relations=[
            Relation(
                source=f"onderwerp-{n}",
                target="verlof",
                type="related_to",
                description=f"Relatie-uitleg {n}",
            )
        ],
    )


async def seed(gateway: Gateway, count: int = 3) -> None:
    for n in range(1, count + 1):
        await gateway.ctx.store.suggestions.create(
            Suggestion(id=f"sug-{n}", delta=delta(n).model_dump(mode="json"), proposed_by=PROPOSER)
        )


def blocks_text(call) -> str:
    return json.dumps(call.args.get("blocks"), ensure_ascii=False)


def row_values(call) -> list[str]:
    return [
        e["value"]
        for b in call.args["blocks"]
        if b["type"] == "actions"
        for e in b["elements"]
        if e["action_id"] == ids.SUGGESTION_APPROVE
    ]


async def report(gateway: Gateway, decided: KbDeltaDecided, **fields) -> None:
    """What the extractor publishes after deciding (the tests stand in for the KG owner)."""
    event = KbDeltaApplied.caused_by(
        decided, actor="extractor", suggestion_id=decided.suggestion_id,
        decision=decided.decision, decided_by=decided.decided_by, proposed_by=PROPOSER, **fields,
    )  # fmt: skip
    await publish_event(gateway.ctx.broker, event, namespace=gateway.namespace)


async def test_ephemeral_list_click_updates_that_row_only(
    gateway: Gateway, fake_slack: FakeSlack, tap: Tap
) -> None:
    await seed(gateway)
    await gateway.command("/r42", "suggestions", user=ADMIN)
    listing = (await fake_slack.wait_for("respond"))[0]
    assert block_problems(listing.args["blocks"]) == []
    # The list shows everything that would be stored, not only label and id.
    assert "EINDE" in blocks_text(listing) and "Relatie-uitleg 2" in blocks_text(listing)
    values = row_values(listing)
    assert len(values) == 3

    # Slack sends an ephemeral message's click without `message`.
    await gateway.action(
        ids.SUGGESTION_APPROVE, values[1], user=ADMIN, channel="C0PUBLIC", ephemeral=True
    )
    clicked = json.loads(values[1])["s"]
    decided = (await tap.wait(KbDeltaDecided))[0]
    assert (decided.suggestion_id, decided.decided_by) == (clicked, ADMIN)
    working = (await fake_slack.wait_for("respond", 2))[1]
    assert working.args["replace_original"] is True
    assert "Goedgekeurd" not in blocks_text(working)  # nothing applied yet
    assert "verwerkt" in blocks_text(working)
    await report(gateway, decided, outcome="applied", topics=1, relations=1)

    final = (await fake_slack.wait_for("respond", 3))[2]
    assert block_problems(final.args["blocks"]) == []
    text = blocks_text(final)
    assert f"Goedgekeurd door <@{ADMIN}>" in text and "1 onderwerp, 1 relatie" in text
    assert "<!date^" in text  # when, in each viewer's time zone
    # The other two rows are still there with their buttons; the decided one has none.
    left = [json.loads(v)["s"] for v in row_values(final)]
    shown = [json.loads(v)["s"] for v in values]
    assert left == [s for s in shown if s != clicked] and len(left) == 2
    assert all(s in text for s in ("Voorstel 1", "Voorstel 2", "Voorstel 3"))

    # The proposer hears the outcome in a DM.
    dm = await fake_slack.wait_for(
        "chat.postMessage", where=lambda c: c.args["channel"] == "D" + PROPOSER[1:]
    )
    [entry] = await gateway.ctx.store.audit.latest()
    assert (entry.actor, entry.action, entry.target, entry.allowed) == (
        ADMIN, "suggestion.approve", clicked, True,
    )  # fmt: skip
    number = clicked.removeprefix("sug-")
    assert f"Voorstel {number}" in blocks_text(dm[0]) and "Goedgekeurd" in blocks_text(dm[0])


async def test_non_admin_click_on_a_list_row_is_refused(
    gateway: Gateway, fake_slack: FakeSlack, tap: Tap
) -> None:
    await seed(gateway, 1)
    forged = json.dumps({"s": "sug-1", "l": ["sug-1"]})
    await gateway.action(ids.SUGGESTION_APPROVE, forged, user=USER, ephemeral=True)
    refusal = (await fake_slack.wait_for("respond"))[0]
    assert "beheerders" in refusal.args["text"] and refusal.args["replace_original"] is False
    await gateway.settle()
    assert tap.of(KbDeltaDecided) == []
    assert (await gateway.ctx.store.suggestions.get("sug-1")).status == "pending"
    [entry] = await gateway.ctx.store.audit.latest()
    assert (entry.actor, entry.action, entry.target, entry.allowed, entry.surface) == (
        USER, "suggestion.approve", "sug-1", False, "slack",
    )  # fmt: skip


async def test_card_shows_the_owners_failure(
    gateway: Gateway, fake_slack: FakeSlack, tap: Tap
) -> None:
    await seed(gateway, 1)
    card = [
        {"type": "section", "text": {"type": "mrkdwn", "text": "Voorstel 1"}},
        {
            "type": "actions",
            "block_id": ids.BLOCK_REVIEW_ACTIONS,
            "elements": [
                {"type": "button", "action_id": ids.SUGGESTION_REJECT, "value": "sug-1",
                 "text": {"type": "plain_text", "text": "Afwijzen"}},
            ],
        },
    ]  # fmt: skip
    await gateway.action(
        ids.SUGGESTION_REJECT, "sug-1", user=ADMIN, channel=ADMIN_CHANNEL, blocks=card
    )
    decided = (await tap.wait(KbDeltaDecided))[0]
    assert decided.decision == "rejected"
    await fake_slack.wait_for("chat.update")
    await report(gateway, decided, outcome="failed", error="de opslag is niet bereikbaar")
    final = (await fake_slack.wait_for("chat.update", 2))[1]
    text = blocks_text(final)
    assert "niet worden toegepast" in text and "de opslag is niet bereikbaar" in text
    assert "Afgewezen door" not in text and ids.SUGGESTION_REJECT not in text


async def test_no_report_says_queued_not_applied(
    gateway: Gateway, fake_slack: FakeSlack, tap: Tap, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("services.gateway.slack.flows.reviews.OUTCOME_TIMEOUT_S", 0.3)
    await seed(gateway, 1)
    value = json.dumps({"s": "sug-1", "l": ["sug-1"]})
    await gateway.action(ids.SUGGESTION_APPROVE, value, user=ADMIN, ephemeral=True)
    await tap.wait(KbDeltaDecided)
    final = (await fake_slack.wait_for("respond", 2))[1]
    text = blocks_text(final)
    assert "wachtrij" in text and "Goedgekeurd" not in text
