"""A question R42 had nothing on (its reply's kb_miss) joins the admins' gap list via the turn."""

from __future__ import annotations

from datetime import timedelta

from services.gateway.core.insights import gap_list
from shared.bus import ChatReply
from shared.store import utcnow
from tests.fakes.slack_server import FakeSlack
from tests.services.gateway.conftest import R42Stub
from tests.services.gateway.harness import USER, Gateway


async def test_a_kb_miss_is_stored_with_the_turn_and_listed_as_a_gap(
    gateway: Gateway, r42_stub: R42Stub, fake_slack: FakeSlack
) -> None:
    async def reply(req):
        if "hond" in req.text:
            return ChatReply(text="Dat staat niet in de kennisgraaf.", kb_miss=True)
        # Worded like a miss, but the KB had something: not a gap.
        return ChatReply(text="Dat staat niet in de kennisgraaf zo, maar via HR.")

    r42_stub.reply = reply
    for ts, text in (("1700000000.000100", "Mag mijn hond mee?"), ("1700000000.000200", "Verlof?")):
        event = {"type": "message", "channel_type": "im", "channel": f"D{USER[1:]}", "user": USER,
                 "text": text, "ts": ts, "client_msg_id": f"cm-{ts}"}  # fmt: skip
        await gateway.event(event, event_id=f"Ev{ts[-3:]}")
        await fake_slack.wait_for("chat.update", 1 if ts.endswith("100") else 2)
    await gateway.settle()
    miss = await gateway.ctx.store.turns.get("cm-1700000000.000100")
    assert miss is not None and miss.kb_miss is True
    gaps = await gap_list(gateway.ctx.store, since=utcnow() - timedelta(hours=1))
    assert [(g.question, g.reasons) for g in gaps] == [("Mag mijn hond mee?", {"unanswered"})]
