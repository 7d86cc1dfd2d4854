"""Block Kit for /r42 curriculum: the coming weeks, and the modal that sets their order."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from slack_sdk.models.blocks import ActionsBlock, InputBlock, PlainTextInputElement
from slack_sdk.models.views import View

from services.gateway.core.curriculum import MAX_WEEKS, ScheduledWeek
from services.gateway.slack import ids
from services.gateway.slack.blocks.kit import Blocks, button, context, escape, header, section

ORDER_BLOCK, ORDER_ACTION = "curriculum_order", "order"
START_BLOCK, START_ACTION = "curriculum_start", "start"


def schedule_blocks(weeks: Sequence[ScheduledWeek], *, admin: bool) -> Blocks:
    """The coming weeks with their topic (or the weighted draw); admins get the edit button."""
    lines = [
        f"• `{w.week}` — *{escape(w.label or w.topic_id or '')}*"
        if w.topic_id
        else f"• `{w.week}` — _vrije keuze (gewogen per persoon)_"
        for w in weeks
    ]
    blocks: Blocks = [header("Curriculum"), section("\n".join(lines) or "_(leeg)_")]
    blocks.append(context("/learn en /quiz volgen het onderwerp van de week."))
    if admin:
        blocks.append(
            ActionsBlock(
                block_id="curriculum_actions",
                elements=[
                    button("Volgorde instellen", ids.CURRICULUM_EDIT, "edit", style="primary"),
                    button("Leegmaken", ids.CURRICULUM_CLEAR, "clear", style="danger"),
                ],
            ).to_dict()
        )
    return blocks


def order_modal(weeks: Sequence[ScheduledWeek], *, channel: str, start: str) -> dict[str, Any]:
    """One topic (id or label) per line, taught from the start week on."""
    current = "\n".join(w.label or w.topic_id or "" for w in weeks if w.topic_id)
    return View(
        type="modal",
        callback_id=ids.CURRICULUM_VIEW,
        private_metadata=json.dumps({"c": channel}, separators=(",", ":")),
        title="Curriculum",
        submit="Opslaan",
        close="Annuleren",
        blocks=[
            section(
                "Eén onderwerp per regel (naam of id), in de volgorde van de weken. De eerste "
                "regel is het onderwerp van de startweek; later ingeplande weken vervallen."
            ),
            InputBlock(
                block_id=ORDER_BLOCK,
                label="Onderwerpen",
                element=PlainTextInputElement(
                    action_id=ORDER_ACTION,
                    multiline=True,
                    initial_value=current or None,
                    max_length=3000,
                ),
            ),
            InputBlock(
                block_id=START_BLOCK,
                label="Startweek (bijv. 2026-W49)",
                optional=True,
                element=PlainTextInputElement(
                    action_id=START_ACTION, initial_value=start, max_length=8
                ),
            ),
            context(f"Hoogstens {MAX_WEEKS} weken."),
        ],
    ).to_dict()
