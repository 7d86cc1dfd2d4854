"""Topic card listeners: the action buttons (also on ephemeral cards, which Slack sends
without `message`) and the edit, merge and relation modals."""

from __future__ import annotations

from typing import Any

from slack_bolt.async_app import AsyncApp

from services.gateway.slack import ids
from services.gateway.slack.blocks import topics as bt
from services.gateway.slack.flows import topics
from services.gateway.slack.gateway import Reply, SlackGateway
from services.gateway.slack.listeners.interactions import (
    action_value,
    checked,
    container,
    on_click,
    text_input,
    user_of,
)
from shared.bus.topic_rpc import TopicAction
from shared.store import LEARNING_RELEVANCES, RELATION_TYPES, TOPIC_TYPES


def selected(view: dict[str, Any], block: str, action: str) -> str:
    """The chosen value of a static select ('' when none)."""
    values = (view.get("state") or {}).get("values") or {}
    option = ((values.get(block) or {}).get(action) or {}).get("selected_option") or {}
    return str(option.get("value") or "") if isinstance(option, dict) else ""


def edit_values(view: dict[str, Any]) -> tuple[dict[str, Any], dict[str, str]]:
    """The edit modal's values, and the Dutch error per input block."""
    values: dict[str, Any] = {
        "label": text_input(view, bt.LABEL, bt.LABEL).strip(),
        "type": selected(view, bt.TYPE, bt.TYPE),
        "description": text_input(view, bt.DESCRIPTION, bt.DESCRIPTION).strip(),
        "relevance": selected(view, bt.RELEVANCE, bt.RELEVANCE),
        "lock": bt.LOCKED in checked(view, bt.LOCK, bt.LOCK),
    }
    errors = {}
    if not values["label"]:
        errors[bt.LABEL] = "Geef het onderwerp een naam."
    elif len(values["label"]) > 200:
        errors[bt.LABEL] = "Een naam is hoogstens 200 tekens."
    if values["type"] not in TOPIC_TYPES:
        errors[bt.TYPE] = "Kies een soort."
    if values["relevance"] not in LEARNING_RELEVANCES:
        errors[bt.RELEVANCE] = "Kies een relevantie."
    if len(values["description"]) > 4000:
        errors[bt.DESCRIPTION] = "Een beschrijving is hoogstens 4000 tekens."
    return values, errors


def register(app: AsyncApp, gw: SlackGateway) -> None:
    """Buttons and modals of the topic card."""
    _register_buttons(app, gw)
    _register_modals(app, gw)


def _register_buttons(app: AsyncApp, gw: SlackGateway) -> None:
    async def modal_button(body: dict[str, Any], reply: Reply) -> None:
        action_id, topic_id = action_value(body)
        await topics.open_modal(gw, button=action_id, user=user_of(body), topic_id=topic_id,
                                trigger_id=str(body.get("trigger_id") or ""),
                                channel=container(body)[0], reply=reply)  # fmt: skip

    async def card(body: dict[str, Any], reply: Reply) -> None:
        await topics.card_to_dm(gw, user=user_of(body), topic_id=action_value(body)[1],
                                reply=reply)  # fmt: skip

    async def delete(body: dict[str, Any], reply: Reply) -> None:
        await topics.delete_asked(gw, user=user_of(body), topic_id=action_value(body)[1],
                                  reply=reply)  # fmt: skip

    async def decided(body: dict[str, Any], reply: Reply) -> None:
        action_id, topic_id = action_value(body)
        confirmed = action_id == bt.DELETE_CONFIRM
        await topics.delete_decided(gw, user=user_of(body), topic_id=topic_id,
                                    confirmed=confirmed, reply=reply)  # fmt: skip

    on_click(app, gw, ids.matching(*topics.MODALS), modal_button, name="topic-modal")
    on_click(app, gw, bt.CARD, card, name="topic-card")
    on_click(app, gw, bt.DELETE, delete, name="topic-delete")
    on_click(
        app, gw, ids.matching(bt.DELETE_CONFIRM, bt.DELETE_CANCEL), decided, name="topic-delete"
    )


def _register_modals(app: AsyncApp, gw: SlackGateway) -> None:
    bg = gw.background

    @app.view(bt.EDIT_VIEW)
    async def edit(ack: Any, body: dict[str, Any], view: dict[str, Any]) -> None:
        topic_id, channel = bt.read_metadata(view)
        values, errors = edit_values(view)
        if errors:
            await ack(response_action="errors", errors=errors)
            return
        await ack()
        try:
            action = topics.edit_action(user_of(body), topic_id, values)
        except ValueError:  # private_metadata that is not ours: nothing to edit
            return
        bg.spawn(topics.submitted(gw, action=action, channel=channel), name="topic-edit")

    @app.view(bt.MERGE_VIEW)
    async def merge(ack: Any, body: dict[str, Any], view: dict[str, Any]) -> None:
        topic_id, channel = bt.read_metadata(view)
        into = text_input(view, bt.INTO, bt.INTO).strip()
        if not into:
            await ack(response_action="errors", errors={bt.INTO: "Noem het onderwerp dat blijft."})
            return
        await ack()
        work = topics.resolved_action(
            gw, user=user_of(body), topic_id=topic_id, kind="merge", other=into, channel=channel
        )
        bg.spawn(work, name="topic-merge")

    @app.view(bt.RELATE_VIEW)
    async def relate(ack: Any, body: dict[str, Any], view: dict[str, Any]) -> None:
        topic_id, channel = bt.read_metadata(view)
        other = text_input(view, bt.OTHER, bt.OTHER).strip()
        rtype = selected(view, bt.RELATION_TYPE, bt.RELATION_TYPE)
        direction = selected(view, bt.DIRECTION, bt.DIRECTION) or "out"
        errors = {}
        if not other:
            errors[bt.OTHER] = "Noem het andere onderwerp."
        if rtype not in RELATION_TYPES:
            errors[bt.RELATION_TYPE] = "Kies een soort relatie."
        if errors:
            await ack(response_action="errors", errors=errors)
            return
        await ack()
        bg.spawn(topics.resolved_action(gw, user=user_of(body), topic_id=topic_id,
                                        kind="relation_add", other=other, channel=channel,
                                        relation_type=rtype, outgoing=direction != "in"),
                 name="topic-relate")  # fmt: skip

    @app.view(bt.UNRELATE_VIEW)
    async def unrelate(ack: Any, body: dict[str, Any], view: dict[str, Any]) -> None:
        topic_id, channel = bt.read_metadata(view)
        rtype, way, other = [*selected(view, bt.RELATION, bt.RELATION).split("|"), "", "", ""][:3]
        try:
            action = TopicAction.model_validate({
                "actor": user_of(body), "surface": "slack", "action": "relation_remove",
                "topic_id": topic_id,
                "relation": {"other": other, "type": rtype, "outgoing": way == "o"},
            })  # fmt: skip
        except ValueError:
            await ack(response_action="errors", errors={bt.RELATION: "Kies een relatie."})
            return
        await ack()
        bg.spawn(topics.submitted(gw, action=action, channel=channel), name="topic-unrelate")
