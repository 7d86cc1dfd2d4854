"""/r42 analyze over the real extractor (offline LLM): plan, apply the checked actions, undo."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from services.gateway.slack import ids
from services.gateway.slack.blocks.kit import block_problems
from shared.store import Topic
from tests.fakes.slack_server import FakeSlack
from tests.scenarios.stack import (
    RELATIONS,
    TOPICS,
    Stack,
    seed,
    stack_settings,
    start_stack,
    stop_stack,
)
from tests.services.gateway.harness import ADMIN, USER

pytestmark = pytest.mark.timeout(90)

DUPLICATES = [
    Topic(id="team-lead", label="Team lead", type="role"),
    Topic(id="hr-portal", label="HR portaal", type="concept"),
]


def text_of(call) -> str:
    return json.dumps(call.args.get("blocks"), ensure_ascii=False) + str(call.args.get("text", ""))


def state_of(blocks: list[dict], keep: set[str]) -> dict:
    """The `state` Slack sends with a click: each checkbox group's checked options."""
    values: dict = {}
    for block in blocks:
        for element in block.get("elements") or []:
            if element.get("type") == "checkboxes":
                chosen = [o for o in element["options"] if o["value"] in keep]
                values[block["block_id"]] = {
                    element["action_id"]: {"type": "checkboxes", "selected_options": chosen}
                }
    return {"values": values}


def option_values(blocks: list[dict]) -> list[str]:
    return [
        o["value"]
        for b in blocks
        for e in b.get("elements") or []
        if e.get("type") == "checkboxes"
        for o in e["options"]
    ]


@pytest.fixture
async def stack(
    nats_url: str, tmp_path: Path, fake_slack: FakeSlack, unique: str
) -> AsyncIterator[Stack]:
    settings = stack_settings(nats_url=nats_url, tmp_path=tmp_path, fake=fake_slack)
    await seed(settings, [*TOPICS, *DUPLICATES], RELATIONS)
    running = await start_stack(
        settings, fake=fake_slack, namespace=f"z{unique}", services=("extractor",)
    )
    try:
        yield running
    finally:
        await stop_stack(running)


async def test_analyze_apply_selected_then_undo(stack: Stack, fake_slack: FakeSlack) -> None:
    gw, store = stack.gateway, stack.store
    await gw.command("/r42", "analyze", user=USER)
    refused = (await fake_slack.wait_for("respond"))[0]
    assert "beheerders" in text_of(refused)

    await gw.command("/r42", "analyze", user=ADMIN)
    plan = (
        await fake_slack.wait_for(
            "chat.postMessage", where=lambda c: c.args["channel"] == "D" + ADMIN[1:], timeout=30
        )
    )[0]
    blocks = plan.args["blocks"]
    assert block_problems(blocks) == []
    assert "team-lead" in text_of(plan) and "hr-portal" in text_of(plan)
    keys = option_values(blocks)
    assert len(keys) == 2  # two near-duplicate merges, each with its own checkbox
    apply = next(
        e for b in blocks for e in b.get("elements") or [] if e.get("action_id") == ids.PLAN_APPLY
    )
    chosen = keys[0]

    # A non-admin's Apply (a forged click) is refused and changes nothing.
    await gw.action(
        ids.PLAN_APPLY, apply["value"], user=USER, channel="DADMIN1", blocks=blocks,
        state=state_of(blocks, set(keys)),
    )  # fmt: skip
    clicks = {"where": lambda c: c.args["_key"].startswith("action-")}
    assert "beheerders" in text_of((await fake_slack.wait_for("respond", **clicks))[0])
    assert await store.topics.get("team-lead") is not None

    # The admin unchecks one action: only the other is applied.
    await gw.action(
        ids.PLAN_APPLY, apply["value"], user=ADMIN, channel="DADMIN1", blocks=blocks,
        state=state_of(blocks, {chosen}),
    )  # fmt: skip
    result = (await fake_slack.wait_for("chat.update"))[0]
    assert block_problems(result.args["blocks"]) == []
    assert "1 samengevoegd" in text_of(result)
    ids_now = await store.topics.ids()
    assert (
        len({"team-lead", "teamlead"} & ids_now) + len({"hr-portal", "hr-portaal"} & ids_now) == 3
    )
    undo = next(
        e for b in result.args["blocks"] for e in b.get("elements") or []
        if e.get("action_id") == ids.PLAN_UNDO
    )  # fmt: skip

    # The same plan cannot be applied again: the graph changed since it was made.
    await gw.action(
        ids.PLAN_APPLY, apply["value"], user=ADMIN, channel="DADMIN1", blocks=blocks,
        state=state_of(blocks, set(keys)),
    )  # fmt: skip
    assert "veranderd" in text_of((await fake_slack.wait_for("respond", 2, **clicks))[1])

    await gw.action(
        ids.PLAN_UNDO, undo["value"], user=ADMIN, channel="DADMIN1", blocks=result.args["blocks"]
    )
    undone = (await fake_slack.wait_for("chat.update", 2))[1]
    assert "Ongedaan gemaakt" in text_of(undone)
    assert {"team-lead", "teamlead", "hr-portal", "hr-portaal"} <= await store.topics.ids()

    trail = [(e.actor, e.action, e.allowed) for e in reversed(await store.audit.latest())]
    assert trail == [
        (USER, "graph.analyze", False),
        (ADMIN, "graph.analyze", True),
        (USER, "graph.apply", False),
        (ADMIN, "graph.apply", True),
        (ADMIN, "graph.apply", True),  # the stale second apply: allowed, and it failed
        (ADMIN, "graph.undo", True),
    ]
