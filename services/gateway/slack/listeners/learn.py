"""/learn listeners: the command, format and slide buttons, the admin's Refine modal."""

from __future__ import annotations

import json
import logging
from typing import Any

from slack_bolt.async_app import AsyncApp

from services.gateway.core.learning import parse_learn
from services.gateway.slack import ids
from services.gateway.slack.blocks import learn as bl
from services.gateway.slack.flows import learn
from services.gateway.slack.gateway import Reply, SlackGateway
from services.gateway.slack.listeners.interactions import (
    action_value,
    container,
    on_click,
    text_input,
    user_of,
)
from shared.errors import BadInputError

log = logging.getLogger(__name__)

LEARN_ACK = "Komt eraan: ik stuur het je in een DM."


def register(app: AsyncApp, gw: SlackGateway) -> None:
    """The /learn command, its buttons and the Refine modal."""
    _register_command(app, gw)
    _register_buttons(app, gw)
    _register_refine(app, gw)


def _register_command(app: AsyncApp, gw: SlackGateway) -> None:
    @app.command("/learn")
    async def learn_command(ack: Any, command: dict[str, Any]) -> None:
        try:  # checked before the ack, so a typo never gets "Komt eraan"
            kind = parse_learn(command.get("text", ""))
        except BadInputError as exc:
            await ack(text=str(exc))
            return
        await ack(text=LEARN_ACK)
        gw.background.spawn(learn.learn(gw, user=command["user_id"], kind=kind), name="learn")


def _register_buttons(app: AsyncApp, gw: SlackGateway) -> None:
    async def slide(body: dict[str, Any], _reply: Reply) -> None:
        target = bl.parse_slide_value(action_value(body)[1])
        channel, ts, _ = container(body)
        if target is None or not channel or not ts:
            log.warning("malformed slide navigation from %s", user_of(body))
            return
        topic_id, slide_no = target
        await learn.show_content(
            gw, channel=channel, ts=ts, user=user_of(body), topic_id=topic_id, kind="slides",
            week="", slide=slide_no,
        )  # fmt: skip

    async def learn_kind(body: dict[str, Any], _reply: Reply) -> None:
        action_id, topic_id = action_value(body)
        kind = bl.content_kind(action_id.removeprefix(ids.LEARN_PREFIX))
        if kind is not None:
            await learn.learn(gw, user=user_of(body), kind=kind, topic_id=topic_id or None)

    on_click(app, gw, ids.matching(ids.SLIDE_PREV, ids.SLIDE_NEXT), slide, name="slide")
    on_click(app, gw, ids.LEARN_RE, learn_kind, name="learn-kind")


def _register_refine(app: AsyncApp, gw: SlackGateway) -> None:
    bg = gw.background

    async def refine_open(body: dict[str, Any], reply: Reply) -> None:
        user, (_, topic_id) = user_of(body), action_value(body)
        if not gw.client.is_admin(user):
            await reply.private("Alleen beheerders kunnen artikelen verfijnen.")
            return
        view = bl.refine_modal(topic_id=topic_id, channel=container(body)[0])
        await gw.api.open_view(str(body.get("trigger_id", "")), view)

    on_click(app, gw, ids.REFINE_OPEN, refine_open, name="refine-open")

    @app.view(ids.REFINE_VIEW)
    async def refine(ack: Any, body: dict[str, Any], view: dict[str, Any]) -> None:
        user = user_of(body)
        instructions = text_input(view, bl.REFINE_INPUT_BLOCK, bl.REFINE_INPUT_ACTION).strip()
        try:
            meta = json.loads(view.get("private_metadata") or "{}")
            topic_id = str(meta["t"])
        except (ValueError, KeyError, TypeError):
            await ack()
            log.warning("refine modal without a topic from %s", user)
            return
        if not instructions:
            errors = {bl.REFINE_INPUT_BLOCK: "Schrijf op wat er anders moet."}
            await ack(response_action="errors", errors=errors)
            return
        await ack()
        bg.spawn(
            learn.refine_submitted(
                gw,
                user=user,
                topic_id=topic_id,
                instructions=instructions,
                channel=str(meta.get("c") or "") or None,
            ),
            name="refine",
        )
