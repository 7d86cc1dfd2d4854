"""Topic cards in Slack: `/r42 topic`, the picture, and the admin actions behind the buttons.

Buttons are shown to admins only, but every write is decided by the KG owner against its
admin list (a forged click or submission is refused there and audited); a button that
only opens a modal is refused here for non-admins, and that refusal is audited too.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any

from services.gateway.core import user_message
from services.gateway.core.topic_picture import neighbourhood_png
from services.gateway.core.topics import REFUSED, outcome_text
from services.gateway.slack.api import Blocks
from services.gateway.slack.blocks import topics as bt
from services.gateway.slack.blocks.kit import escape, notice_blocks
from services.gateway.slack.gateway import Reply, SlackGateway
from shared.bus.topic_rpc import RelationSpec, TopicAction, TopicEdit, TopicReply
from shared.errors import R42Error

log = logging.getLogger(__name__)

Respond = Callable[[Blocks, str], Awaitable[None]]
MODALS = {bt.EDIT: bt.edit_modal, bt.MERGE: bt.merge_modal, bt.RELATE: bt.relate_modal,
          bt.UNRELATE: bt.unrelate_modal}  # fmt: skip
MODAL_ACTIONS = {bt.EDIT: "edit", bt.MERGE: "merge", bt.RELATE: "relation_add",
                 bt.UNRELATE: "relation_remove"}  # fmt: skip


async def topic_command(
    gw: SlackGateway, *, user: str, query: str, channel: str, respond: Respond
) -> None:
    """/r42 topic <id|label>: the card (actions for admins) and a picture of its neighbourhood."""
    card = await gw.client.topics.card(query)
    in_dm = channel.startswith("D")
    note = "de afbeelding staat hieronder" if in_dm else "de afbeelding staat in je DM met R42"
    await respond(bt.card_blocks(card, admin=gw.client.is_admin(user), picture_note=note),
                  card.topic.label)  # fmt: skip
    try:
        target = channel if in_dm else await gw.api.dm_channel(user)
        await gw.api.upload_png(target, neighbourhood_png(card), filename=f"{card.topic.id}.png",
                                title=f"Omgeving van {card.topic.label}")  # fmt: skip
    except Exception:  # the card is there; a failed picture is only logged
        log.warning("topic %s: the neighbourhood picture was not uploaded", card.topic.id,
                    exc_info=True)  # fmt: skip


async def _refused(
    gw: SlackGateway, *, user: str, action: str, topic_id: str, reply: Reply
) -> None:
    await gw.client.topics.refuse(user_id=user, action=action, target=topic_id, surface="slack")
    await reply.private(REFUSED[0].upper() + REFUSED[1:] + ".")


async def open_modal(
    gw: SlackGateway, *, button: str, user: str, topic_id: str, trigger_id: str, channel: str,
    reply: Reply,
) -> None:  # fmt: skip
    """Edit / Merge / relation buttons: open the modal (admins; others refused and audited)."""
    if not gw.client.is_admin(user):
        await _refused(gw, user=user, action=MODAL_ACTIONS[button], topic_id=topic_id, reply=reply)
        return
    try:
        card = await gw.client.topics.card(topic_id)
        await gw.api.open_view(trigger_id, MODALS[button](card, channel=channel))
    except Exception as exc:
        await reply.private(user_message(exc))


async def delete_asked(gw: SlackGateway, *, user: str, topic_id: str, reply: Reply) -> None:
    """Delete: replace the card by a confirmation that says what goes with the topic."""
    if not gw.client.is_admin(user):
        await _refused(gw, user=user, action="delete", topic_id=topic_id, reply=reply)
        return
    try:
        card = await gw.client.topics.card(topic_id)
        impact = await gw.client.topics.impact(card.topic.id)
    except Exception as exc:
        await reply.private(user_message(exc))
        return
    blocks = bt.delete_confirm_blocks(card.topic.id, card.topic.label, impact)
    await reply.update(blocks, f"{card.topic.label} verwijderen?")


async def delete_decided(
    gw: SlackGateway, *, user: str, topic_id: str, confirmed: bool, reply: Reply
) -> None:
    """Yes: the owner deletes (or refuses); Cancel: the card again."""
    try:
        if not confirmed:
            card = await gw.client.topics.card(topic_id)
            await reply.update(bt.card_blocks(card, admin=gw.client.is_admin(user)),
                               card.topic.label)  # fmt: skip
            return
        answer = await gw.client.topics.act(
            TopicAction(actor=user, surface="slack", action="delete", topic_id=topic_id)
        )
    except Exception as exc:
        await reply.private(user_message(exc))
        return
    text = outcome_text(answer, f":wastebasket: `{escape(topic_id)}` is verwijderd, met "
                                f"{answer.removed_relations} relatie(s).")  # fmt: skip
    if answer.outcome == "done":
        await reply.update(notice_blocks(text), text)
    else:
        await reply.private(text)


def _done_text(action: TopicAction, answer: TopicReply) -> str:
    label = answer.topic.label if answer.topic else action.topic_id
    if action.action == "edit":
        return f":white_check_mark: *{escape(label)}* is bijgewerkt."
    if action.action == "merge":
        moved = (answer.after or {}).get("relations_moved", 0)
        return (f":twisted_rightwards_arrows: `{escape(action.topic_id)}` is samengevoegd met "
                f"*{escape(label)}* ({moved} relatie(s) verplaatst).")  # fmt: skip
    what = (answer.after or answer.before or {}).get("relation", "")
    verb = "toegevoegd" if action.action == "relation_add" else "verwijderd"
    return f":link: Relatie `{escape(str(what))}` is {verb}."


async def submitted(gw: SlackGateway, *, action: TopicAction, channel: str) -> None:
    """A modal was submitted: the owner applies (or refuses); the admin sees the outcome."""
    user = action.actor
    card_blocks: Blocks = []
    try:
        answer = await gw.client.topics.act(action)
        text = outcome_text(answer, _done_text(action, answer))
        if answer.outcome == "done":
            shown = answer.topic.id if answer.topic else action.topic_id
            card = await gw.client.topics.card(shown)
            card_blocks = bt.card_blocks(card, admin=gw.client.is_admin(user))
    except Exception as exc:
        text = f":warning: {user_message(exc)}"
    target = channel or await gw.api.dm_channel(user)
    await gw.api.ephemeral(target, user, text, blocks=[*notice_blocks(text), *card_blocks])


def edit_action(user: str, topic_id: str, values: dict[str, Any]) -> TopicAction:
    """The edit a modal's values ask for (the owner works out what changed)."""
    edit = TopicEdit(label=values["label"], type=values["type"],
                     description=values["description"],
                     learning_relevance=values["relevance"], lock=values["lock"])  # fmt: skip
    return TopicAction(actor=user, surface="slack", action="edit", topic_id=topic_id, edit=edit)


async def resolved_action(
    gw: SlackGateway, *, user: str, topic_id: str, kind: str, other: str, channel: str,
    relation_type: str = "related_to", outgoing: bool = True,
) -> None:  # fmt: skip
    """Merge or add a relation: the other topic named by id or label, then submitted()."""
    try:
        other_id = (await gw.client.topics.card(other)).topic.id
        if kind == "merge":
            action = TopicAction(actor=user, surface="slack", action="merge", topic_id=topic_id,
                                 into=other_id)  # fmt: skip
        else:
            spec = RelationSpec.model_validate(
                {"other": other_id, "type": relation_type, "outgoing": outgoing}
            )
            action = TopicAction(actor=user, surface="slack", action="relation_add",
                                 topic_id=topic_id, relation=spec)  # fmt: skip
    except (R42Error, ValueError) as exc:
        target = channel or await gw.api.dm_channel(user)
        text = f":warning: {user_message(exc) if isinstance(exc, R42Error) else 'Dat kan niet.'}"
        await gw.api.ephemeral(target, user, text)
        return
    await submitted(gw, action=action, channel=channel)
