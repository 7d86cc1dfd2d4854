"""App Home shows admins the latest audit entries (refusals marked); other users see none."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

from services.gateway.slack.blocks.kit import block_problems
from shared.store import AuditEntry
from tests.fakes.slack_server import FakeSlack
from tests.services.gateway.harness import ADMIN, USER, Gateway

T0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)


async def test_home_lists_latest_audit_entries_for_admins_only(
    gateway: Gateway, fake_slack: FakeSlack
) -> None:
    for i in range(12):
        await gateway.ctx.store.audit.record(
            AuditEntry(actor=ADMIN if i % 3 else USER, action="topic.edit", target=f"topic-{i}",
                       allowed=bool(i % 3), at=T0 + timedelta(minutes=i), surface="slack")
        )  # fmt: skip
    for user, event_id in ((USER, "EvA1"), (ADMIN, "EvA2")):
        await gateway.event(
            {"type": "app_home_opened", "user": user, "tab": "home"}, event_id=event_id
        )
    views = await fake_slack.wait_for("views.publish", 2)
    by_user = {c.args["user_id"]: json.dumps(c.args["view"]) for c in views}
    assert "Laatste beheeracties" not in by_user[USER] and "topic-" not in by_user[USER]
    admin_view = by_user[ADMIN]
    assert "Laatste beheeracties" in admin_view
    assert "topic-11" in admin_view and "topic-4" in admin_view  # the newest 8
    assert "topic-3 (" not in admin_view
    assert admin_view.count("geweigerd") == 2  # of the newest 8, topic-9 and topic-6
    for c in views:
        assert block_problems(c.args["view"]["blocks"], max_blocks=100) == []
