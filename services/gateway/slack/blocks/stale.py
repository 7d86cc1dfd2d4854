"""Block Kit for /r42 stale: stale parts with a checkbox each, and what regenerating did."""

from __future__ import annotations

from typing import Any

from slack_sdk.models.blocks import ActionsBlock, CheckboxesElement, Option

from services.gateway.core.text import CONTENT_KINDS_NL, stale_reason_nl
from services.gateway.slack import ids
from services.gateway.slack.blocks.kit import (
    MAX_CHECKBOX_OPTIONS,
    MAX_MESSAGE_BLOCKS,
    SAFE_SECTION_TEXT,
    Blocks,
    button,
    context,
    escape,
    header,
    mention,
    section,
    truncate,
)
from shared.bus.stale_rpc import RegenerateReply, StaleListReply, StalePart

TITLE = "Verouderde leerinhoud"


def _line(n: int, p: StalePart, limit: int) -> str:
    why = "; ".join(stale_reason_nl(r) for r in p.reasons)
    refined = " · _bijgewerkt door een beheerder_" if p.refined else ""
    name, kind = escape(p.label or p.topic_id), CONTENT_KINDS_NL.get(p.kind, p.kind)
    return truncate(f"*{n}.* {name} — {kind}: {why}{refined}", limit)


def stale_blocks(reply: StaleListReply) -> Blocks:
    """Every stale part, checked; Vernieuwen regenerates the checked ones."""
    if not reply.parts:
        return [header(TITLE), section("Alle leerinhoud is actueel.")]
    blocks: Blocks = [header(TITLE), context(f"{len(reply.parts)} onderdelen verouderd.")]
    groups = [
        reply.parts[i : i + MAX_CHECKBOX_OPTIONS]
        for i in range(0, len(reply.parts), MAX_CHECKBOX_OPTIONS)
    ]
    room = (MAX_MESSAGE_BLOCKS - 4) // 2
    for g, group in enumerate(groups[:room]):
        first = g * MAX_CHECKBOX_OPTIONS + 1
        per_line = SAFE_SECTION_TEXT // len(group) - 1
        options = [
            Option(
                value=p.part,
                label=truncate(
                    f"{first + i}. {p.label or p.topic_id} ({CONTENT_KINDS_NL[p.kind]})", 75
                ),
            )
            for i, p in enumerate(group)
        ]
        blocks.append(
            section("\n".join(_line(first + i, p, per_line) for i, p in enumerate(group)))
        )
        blocks.append(
            ActionsBlock(
                block_id=f"stale_group_{g}",
                elements=[
                    CheckboxesElement(
                        action_id=f"{ids.STALE_PICK_PREFIX}{g}",
                        options=options,
                        initial_options=options,
                    )
                ],
            ).to_dict()
        )
    if len(groups) > room:
        blocks.append(context("… en meer: `r42 content stale` toont alles."))
    blocks.append(
        ActionsBlock(
            block_id="stale_actions",
            elements=[button("Geselecteerde vernieuwen", ids.STALE_REGENERATE, "go",
                             style="primary")],
        ).to_dict()
    )  # fmt: skip
    return blocks


def selected_parts(state: dict[str, Any]) -> list[str]:
    """The checked parts from a click's `state.values`."""
    parts: list[str] = []
    for block in (state.get("values") or {}).values():
        for action_id, element in (block or {}).items():
            if str(action_id).startswith(ids.STALE_PICK_PREFIX):
                for option in element.get("selected_options") or []:
                    value = str(option.get("value", ""))
                    if value and value not in parts:
                        parts.append(value)
    return parts


def working_blocks(count: int, *, by: str) -> Blocks:
    """While the content service regenerates."""
    return [header(TITLE), section(f":gear: {mention(by)} vernieuwt {count} onderdelen…")]


def regenerated_blocks(reply: RegenerateReply, *, by: str, at: str) -> Blocks:
    """What regenerating did per topic (failures with their reason)."""
    lines = []
    for t in reply.topics[:40]:
        kinds = ", ".join(CONTENT_KINDS_NL.get(k, k) for k in t.kinds) or "niets"
        if t.error:
            lines.append(f":warning: `{escape(t.topic_id)}`: {kinds} vernieuwd; mislukt: "
                         f"{escape(truncate(t.error, 300))}")  # fmt: skip
        else:
            lines.append(f":white_check_mark: `{escape(t.topic_id)}`: {kinds} vernieuwd")
    return [
        header(TITLE),
        section(truncate("\n".join(lines) or "Er is niets vernieuwd.", SAFE_SECTION_TEXT)),
        context(f"Door {mention(by)} om {at}."),
    ]
