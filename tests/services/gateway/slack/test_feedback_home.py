"""App Home gives admins the feedback digest and the gap list; other users see neither."""

from __future__ import annotations

import json

from services.gateway.slack.blocks.kit import block_problems
from shared.store import ChatTurn, FeedbackVote, Topic
from tests.fakes.slack_server import FakeSlack
from tests.services.gateway.harness import ADMIN, USER, Gateway


async def test_home_shows_admins_approval_worst_topics_and_gaps(
    gateway: Gateway, fake_slack: FakeSlack
) -> None:
    store = gateway.ctx.store
    await store.topics.upsert_many(
        [Topic(id="verlof", label="Verlof", type="process", description="Via HR.")]
    )
    await store.turns.put(
        ChatTurn(turn_id="t1", user=USER, question="Hoe vraag ik verlof aan?",
                 answer="Via het portaal.", topic_ids=["verlof"])
    )  # fmt: skip
    await store.turns.put(
        ChatTurn(turn_id="t2", user=USER, question="Mag de <!channel> hond mee?",
                 answer="Dat staat niet in de kennisgraaf.", kb_miss=True)
    )  # fmt: skip
    turn = await store.turns.get("t1")
    assert turn is not None
    await store.feedback.record(
        FeedbackVote(turn_id="t1", user=USER, value="down", **turn.content().model_dump())
    )
    await store.feedback.record(
        FeedbackVote(turn_id="t1", user=ADMIN, value="up", **turn.content().model_dump())
    )
    for user, event_id in ((USER, "EvF1"), (ADMIN, "EvF2")):
        await gateway.event(
            {"type": "app_home_opened", "user": user, "tab": "home"}, event_id=event_id
        )
    views = await fake_slack.wait_for("views.publish", 2)
    by_user = {c.args["user_id"]: json.dumps(c.args["view"], ensure_ascii=False) for c in views}
    assert "Feedback op antwoorden" not in by_user[USER] and "hond" not in by_user[USER]
    admin_view = by_user[ADMIN]
    assert "50% positief (1👍 1👎)" in admin_view
    assert "Meeste 👎 (per onderwerp)" in admin_view and "Verlof: 1👎 1👍" in admin_view
    assert "Wat het handboek nog niet beantwoordt" in admin_view
    assert "Hoe vraag ik verlof aan?" in admin_view and "onbeantwoord" in admin_view
    assert "&lt;!channel&gt;" in admin_view and "<!channel>" not in admin_view
    for c in views:
        assert block_problems(c.args["view"]["blocks"], max_blocks=100) == []
