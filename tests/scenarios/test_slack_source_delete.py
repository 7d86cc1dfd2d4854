"""Deleting a source from Slack over the real extractor and r42 service: the sources list's
Verwijderen, the owner's preview, Ja, the result with Undo; a forged click, the bound, a
double click and an unknown id (ephemeral clicks carry no `message`, as Slack sends them)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from services.gateway.slack.blocks import sources as bs
from services.gateway.slack.blocks.kit import block_problems
from services.r42.app import kb_of
from shared.bus import KbUpdated
from shared.store import open_store
from tests.fakes.slack_server import FakeSlack, SlackCall
from tests.scenarios.stack import Stack, stack_settings, start_stack, stop_stack
from tests.services.extractor.test_source_delete_rpc import seed_sources
from tests.services.gateway.harness import ADMIN, USER, Tap, make_tap

pytestmark = pytest.mark.timeout(120)

LIST = "C0ADMINS"


def text_of(call: SlackCall) -> str:
    return json.dumps(call.args.get("blocks"), ensure_ascii=False) + str(call.args.get("text", ""))


def buttons(call: SlackCall) -> list[dict[str, Any]]:
    found = []
    for block in call.args.get("blocks") or []:
        found += [e for e in block.get("elements") or [] if e.get("type") == "button"]
        if (block.get("accessory") or {}).get("type") == "button":
            found.append(block["accessory"])
    return found


@pytest.fixture
async def stack(
    nats_url: str, tmp_path: Path, fake_slack: FakeSlack, unique: str
) -> AsyncIterator[Stack]:
    settings = stack_settings(nats_url=nats_url, tmp_path=tmp_path, fake=fake_slack)
    store = await open_store(settings.store_url)
    try:
        await seed_sources(store)
    finally:
        await store.close()
    running = await start_stack(settings, fake=fake_slack, namespace=f"s{unique}",
                                services=("r42", "extractor"))  # fmt: skip
    try:
        yield running
    finally:
        await stop_stack(running)


class Clicks:
    """Clicks on ephemeral messages and the response_url posts they get back, per user."""

    def __init__(self, stack: Stack, fake: FakeSlack) -> None:
        self.gw, self.fake, self.seen = stack.gateway, fake, 0

    async def click(self, action_id: str, value: str, *, user: str = ADMIN) -> SlackCall:
        await self.gw.action(action_id, value, user=user, channel=LIST, ephemeral=True)
        self.seen += 1
        where = {"where": lambda c: c.args["_key"].startswith("action-")}
        return (await self.fake.wait_for("respond", self.seen, **where))[self.seen - 1]


async def ask_r42(stack: Stack, fake: FakeSlack, question: str, n: int) -> str:
    """A DM question in its own conversation; the streamed answer's text."""
    await stack.gateway.event({
        "type": "message", "channel_type": "im", "channel": f"D0ASK{n}", "user": USER,
        "text": question, "ts": f"170000000{n}.000100", "client_msg_id": f"cm-ask-{n}",
    }, event_id=f"Ev-ask-{n}")  # fmt: skip
    done = await fake.wait_for("chat.stopStream", n, timeout=30)
    return fake.streams[done[n - 1].args["ts"]].text


async def test_an_admin_deletes_a_source_from_the_sources_list(
    stack: Stack, fake_slack: FakeSlack
) -> None:
    store, gw = stack.store, stack.gateway
    tap: Tap = await make_tap(gw)
    assert "Declaraties" in await ask_r42(stack, fake_slack, "Hoe declareer ik onkosten?", 1)
    await gw.command("/r42", "sources", user=ADMIN, channel=LIST)
    (listing,) = await fake_slack.wait_for("respond")
    assert block_problems(listing.args["blocks"]) == []
    deletes = {b["value"]: b["action_id"] for b in buttons(listing)
               if b["action_id"].startswith(bs.DELETE_PREFIX)}  # fmt: skip
    assert set(deletes) == {"src-a", "src-b", "src-c"}
    clicks = Clicks(stack, fake_slack)

    # A non-admin's forged clicks: refused (by the owner for Ja), nothing changes.
    refused = await clicks.click(deletes["src-a"], "src-a", user=USER)
    forged = await clicks.click(bs.DELETE_YES, "src-a", user=USER)
    for answer in (refused, forged):
        assert "Alleen beheerders" in text_of(answer) and answer.args["replace_original"] is False
    assert await store.sources.get("src-a") is not None and len(await store.topics.ids()) == 10

    confirm = await clicks.click(deletes["src-a"], "src-a")
    said = text_of(confirm)
    assert confirm.args["replace_original"] is True and block_problems(confirm.args["blocks"]) == []
    assert "2 onderwerp(en) die alleen deze bron noemt (declaraties, verlof)" in said
    assert "2 relatie(s)" in said and "gemarkeerd voor beoordeling (teamlead)" in said
    assert "De grens is 5" in said and bs.DELETE_YES in said

    done = await clicks.click(bs.DELETE_YES, "src-a")
    again = await clicks.click(bs.DELETE_YES, "src-a")  # the same click twice
    (undo,) = [b for b in buttons(done) if b["action_id"] == bs.UNDO]
    assert "Bron verlof.md is verwijderd" in text_of(done) and undo["value"].startswith("undo-")
    assert "al verwijderd" in text_of(again) and undo["value"] in text_of(again)
    assert await store.topics.ids() == {"hr-portaal", "teamlead", *(f"los-{i}" for i in range(6))}
    teamlead = await store.topics.get("teamlead")
    assert teamlead is not None and "review" in teamlead.metadata.model_dump()
    (updated,) = await tap.wait(KbUpdated)
    assert (updated.removed_ids, updated.changed_ids) == (["declaraties", "verlof"], ["teamlead"])
    await kb_of(stack.services["r42"]).settled()
    assert "declaraties" not in (await kb_of(stack.services["r42"]).get()).topics
    assert "Declaraties" not in await ask_r42(stack, fake_slack, "Hoe declareer ik onkosten?", 2)

    # Over the bound: six topics of eight; refused with how to raise it, nothing changes.
    over = await clicks.click(deletes["src-c"], "src-c")
    assert "haalt 6 van de 8 onderwerpen weg; de grens is 5" in text_of(over)
    assert "--max-deletions 6" in text_of(over) and bs.DELETE_YES not in text_of(over)
    stale = await clicks.click(bs.DELETE_YES, "src-c")  # a Ja from before the graph grew
    assert "Er is niets verwijderd" in text_of(stale) and len(await store.topics.ids()) == 8
    (raise_,) = [b for b in buttons(over) if b["action_id"] == bs.DELETE_RAISE]
    raised = await clicks.click(bs.DELETE_RAISE, raise_["value"])
    assert "Bron los.md is verwijderd: 6 onderwerp(en)" in text_of(raised)
    assert await store.topics.ids() == {"hr-portaal", "teamlead"}

    missing = await clicks.click(bs.DELETE_YES, "src-nope")
    assert "Bron `src-nope` bestaat niet (meer)" in text_of(missing)
    undone = await clicks.click(bs.UNDO, undo["value"])
    assert "Verwijderen ongedaan gemaakt" in text_of(undone)
    assert {"declaraties", "verlof"} <= await store.topics.ids()
    trail = [(e.actor, e.action, e.target, e.allowed) for e in reversed(await store.audit.latest())]
    assert trail[:4] == [(USER, "source.delete", "src-a", False)] * 2 + [
        (ADMIN, "source.delete", "src-a", True)] * 2  # fmt: skip
