"""/r42 stale over the real content service (offline LLM): list, regenerate the checked parts."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from services.gateway.slack import ids
from services.gateway.slack.blocks.kit import block_problems
from tests.fakes.slack_server import FakeSlack
from tests.scenarios.stack import Stack, seed, stack_settings, start_stack, stop_stack
from tests.services.gateway.harness import ADMIN, USER

pytestmark = pytest.mark.timeout(120)


def text_of(call) -> str:
    return json.dumps(call.args.get("blocks"), ensure_ascii=False) + str(call.args.get("text", ""))


def checked(blocks: list[dict]) -> dict:
    """The `state` Slack sends with the click: every checkbox as it is (all checked)."""
    values: dict = {}
    for block in blocks:
        for element in block.get("elements") or []:
            if element.get("type") == "checkboxes":
                values[block["block_id"]] = {
                    element["action_id"]: {
                        "type": "checkboxes",
                        "selected_options": element["initial_options"],
                    }
                }
    return {"values": values}


@pytest.fixture
async def stack(
    nats_url: str, tmp_path: Path, fake_slack: FakeSlack, unique: str
) -> AsyncIterator[Stack]:
    settings = stack_settings(nats_url=nats_url, tmp_path=tmp_path, fake=fake_slack)
    await seed(settings)
    running = await start_stack(
        settings, fake=fake_slack, namespace=f"s{unique}", services=("quiz", "content")
    )
    try:
        yield running
    finally:
        await stop_stack(running)


async def test_stale_parts_are_listed_and_regenerated(stack: Stack, fake_slack: FakeSlack) -> None:
    gw, store = stack.gateway, stack.store
    await gw.command("/learn", "", user=ADMIN)
    await fake_slack.wait_for("chat.update", timeout=60)
    [content] = await store.content.list()
    topic = await store.topics.get(content.topic_id)
    await store.topics.upsert_many(
        [topic.model_copy(update={"description": topic.description + " Nieuw beleid."})]
    )

    await gw.command("/r42", "stale", user=USER)
    own = {"where": lambda c: c.args["_key"].startswith("r42-")}
    assert "beheerders" in text_of((await fake_slack.wait_for("respond", **own))[0])

    await gw.command("/r42", "stale", user=ADMIN)
    listing = (await fake_slack.wait_for("respond", 2, **own))[1]
    blocks = listing.args["blocks"]
    assert block_problems(blocks) == []
    assert topic.label in text_of(listing) and "sindsdien veranderd" in text_of(listing)

    # The list is ephemeral: the click has no `message`, only the checkboxes' state.
    await gw.action(ids.STALE_REGENERATE, "go", user=ADMIN, ephemeral=True, state=checked(blocks))
    clicks = {"where": lambda c: c.args["_key"].startswith("action-")}
    done = await fake_slack.wait_for(
        "respond", where=lambda c: "vernieuwd" in text_of(c), timeout=60
    )
    assert block_problems(done[0].args["blocks"]) == []
    assert f"`{topic.id}`: artikel vernieuwd" in text_of(done[0])
    assert len(await fake_slack.wait_for("respond", 2, **clicks)) >= 2  # working, then done

    await gw.command("/r42", "stale", user=ADMIN)
    fresh = (await fake_slack.wait_for("respond", 3, **own))[2]
    assert "actueel" in text_of(fresh)
    trail = [(e.actor, e.action, e.allowed) for e in reversed(await store.audit.latest())]
    assert trail == [
        (USER, "content.stale", False),
        (ADMIN, "content.regenerate", True),
    ]
