"""/r42 curriculum: admins set the order of the weekly topics; /learn and the quiz follow it."""

from __future__ import annotations

import json

from services.gateway.core.curriculum import this_week, week_after
from services.gateway.core.week import quiz_status
from services.gateway.slack import ids
from services.gateway.slack.blocks import curriculum as bk
from services.gateway.slack.blocks.kit import block_problems
from tests.fakes.slack_server import FakeSlack
from tests.services.gateway.conftest import seed_topics
from tests.services.gateway.harness import ADMIN, USER, Gateway


def text_of(call) -> str:
    return json.dumps(call.args.get("blocks"), ensure_ascii=False)


async def submit(gateway: Gateway, order: str, *, user: str = ADMIN, start: str = "") -> dict:
    status, body = await gateway.view(
        ids.CURRICULUM_VIEW,
        {bk.ORDER_BLOCK: {bk.ORDER_ACTION: order}, bk.START_BLOCK: {bk.START_ACTION: start}},
        user=user,
        private_metadata=json.dumps({"c": "C0PUBLIC"}),
    )
    assert status == 200
    return json.loads(body) if body else {}


async def test_admin_sets_the_order_and_the_week_follows_it(
    gateway: Gateway, fake_slack: FakeSlack
) -> None:
    await seed_topics(gateway, ("verlof", "Verlof"), ("hr-portaal", "HR-portaal"), ("ziek", "Ziek"))
    await gateway.command("/r42", "curriculum", user=ADMIN)
    shown = (await fake_slack.wait_for("respond"))[0]
    assert block_problems(shown.args["blocks"]) == []
    assert ids.CURRICULUM_EDIT in text_of(shown) and "vrije keuze" in text_of(shown)

    # The list is ephemeral: the click arrives without `message`; the modal opens.
    await gateway.action(ids.CURRICULUM_EDIT, "edit", user=ADMIN, ephemeral=True)
    modal = (await fake_slack.wait_for("views.open"))[0].args["view"]
    assert block_problems(modal["blocks"], max_blocks=100) == []

    # A topic that does not exist is named inline; nothing is stored.
    bad = await submit(gateway, "HR-portaal\nBestaat niet")
    assert bad["response_action"] == "errors" and "Bestaat niet" in bad["errors"][bk.ORDER_BLOCK]
    assert await gateway.ctx.store.curriculum.all() == []

    assert await submit(gateway, "HR-portaal\n\nverlof\n") == {}
    week = this_week()
    assert await gateway.ctx.store.curriculum.get(week) == "hr-portaal"
    assert await gateway.ctx.store.curriculum.get(week_after(week, 1)) == "verlof"
    saved = await fake_slack.wait_for("chat.postEphemeral")
    assert "2 weken" in saved[0].args["text"]

    # The one rule of the week's topic (asked of the quiz service) follows the curriculum.
    status = await quiz_status(gateway.gw.client.ctx, user_id=USER)
    assert (status.week, status.topic_id) == (week, "hr-portaal")
    nxt = await quiz_status(gateway.gw.client.ctx, user_id=USER, week=week_after(week, 1))
    assert nxt.topic_id == "verlof"

    [entry, *_] = await gateway.ctx.store.audit.latest()
    assert (entry.action, entry.actor, entry.allowed) == ("curriculum.set", ADMIN, True)
    assert entry.after == {week: "hr-portaal", week_after(week, 1): "verlof"}


async def test_non_admin_cannot_set_or_open_it(gateway: Gateway, fake_slack: FakeSlack) -> None:
    await seed_topics(gateway, ("verlof", "Verlof"))
    await gateway.command("/r42", "curriculum", user=USER)
    shown = (await fake_slack.wait_for("respond"))[0]
    assert ids.CURRICULUM_EDIT not in text_of(shown)  # read-only for non-admins

    await gateway.action(ids.CURRICULUM_EDIT, "edit", user=USER, ephemeral=True)
    refused = (await fake_slack.wait_for("respond", 2))[1]
    assert "beheerders" in refused.args["text"]
    forged = await submit(gateway, "verlof", user=USER)
    assert "beheerders" in forged["errors"][bk.ORDER_BLOCK]
    await gateway.settle()
    assert fake_slack.calls_to("views.open") == []
    assert await gateway.ctx.store.curriculum.all() == []
    trail = [(e.actor, e.action, e.allowed) for e in await gateway.ctx.store.audit.latest()]
    assert trail == [(USER, "curriculum.set", False)] * 2
