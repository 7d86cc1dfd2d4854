"""Deleting a source from Slack: Verwijderen on the sources list, the confirmation, the result.

The confirmation comes from the KG owner's preview (what goes, the bound); Ja, verwijderen
sends the delete to the owner, which decides against its own admin list (a forged click is
refused and audited there) and bounds it. Undo restores the graph from the recorded change.
"""

from __future__ import annotations

from typing import Literal

from services.gateway.core import user_message
from services.gateway.core.source_delete import REFUSED, outcome_text
from services.gateway.slack.blocks import admin as ba
from services.gateway.slack.blocks import sources as bs
from services.gateway.slack.gateway import Reply, SlackGateway

Choice = Literal["yes", "raise", "no"]


async def delete_asked(gw: SlackGateway, *, user: str, source_id: str, reply: Reply) -> None:
    """Verwijderen: replace the list by the owner's preview of what goes (admins only)."""
    client = gw.client
    if not client.is_admin(user):
        await client.sources.refuse_delete(user_id=user, source_id=source_id, surface="slack")
        await reply.private(REFUSED)
        return
    try:
        answer = await client.sources.delete(source_id=source_id, user_id=user, surface="slack",
                                             confirm=False)  # fmt: skip
    except Exception as exc:
        await reply.private(user_message(exc))
        return
    if answer.outcome != "preview":
        await reply.private(outcome_text(answer, source_id))
        return
    await reply.update(bs.confirm_blocks(source_id, answer), f"{answer.source_name} verwijderen?")


async def delete_decided(
    gw: SlackGateway, *, user: str, value: str, choice: Choice, reply: Reply
) -> None:
    """Ja (or Toch, with the raised bound): the owner deletes or refuses; Annuleren: the list."""
    client = gw.client
    source_id, _, raised = value.partition(bs.SEPARATOR)
    try:
        if choice == "no":
            sources = await client.sources.list()
            await reply.update(ba.sources_blocks(sources, admin=client.is_admin(user)), "Bronnen")
            return
        bound = int(raised) if choice == "raise" and raised.isdigit() else None
        answer = await client.sources.delete(source_id=source_id, user_id=user, surface="slack",
                                             confirm=True, max_deletions=bound)  # fmt: skip
    except Exception as exc:
        await reply.private(user_message(exc))
        return
    text = outcome_text(answer, source_id)
    if answer.outcome in ("done", "already_deleted"):
        await reply.update(bs.done_blocks(source_id, answer), text)
    elif answer.outcome == "over_bound":
        await reply.update(bs.confirm_blocks(source_id, answer), text)
    else:
        await reply.private(text)


async def undo_clicked(gw: SlackGateway, *, user: str, undo_id: str, reply: Reply) -> None:
    """Ongedaan maken on the result: the recorded graph change is written back (admins)."""
    try:
        result = await gw.client.analysis.undo(user_id=user, undo_id=undo_id, surface="slack")
    except Exception as exc:
        await reply.private(f"Niet ongedaan gemaakt: {user_message(exc)}")
        return
    await reply.update(bs.undone_blocks(result.undo_id, result.topics), "Ongedaan gemaakt")
