"""Block Kit for graph analysis: the plan with a checkbox per action, the result, the undo."""

from __future__ import annotations

from typing import Any

from slack_sdk.models.blocks import ActionsBlock, CheckboxesElement, Option

from services.gateway.core.text import PLAN_KINDS_NL
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
from shared.bus.graph_rpc import GraphApplyReply, GraphPlanReply, GraphUndoReply, PlanAction

TITLE = "Analyse van de kennisgraaf"
_FIXED = 6  # header, summary, bound, skipped, the buttons, "and more"


def _line(n: int, action: PlanAction, limit: int) -> str:
    why = f" — _{escape(action.why)}_" if action.why else ""
    return truncate(f"*{n}.* {PLAN_KINDS_NL[action.kind]}: `{escape(action.what)}`{why}", limit)


def plan_blocks(plan: GraphPlanReply) -> Blocks:
    """The plan: each action numbered with what and why, a checkbox per action (all checked)."""
    blocks: Blocks = [header(TITLE)]
    if plan.summary:
        blocks.append(section(escape(truncate(plan.summary, 2000))))
    if not plan.actions:
        blocks.append(section("De analyse stelt geen wijzigingen voor."))
        if plan.skipped:
            blocks.append(
                context(escape(truncate("Overgeslagen: " + "; ".join(plan.skipped), 2900)))
            )
        return blocks
    blocks.append(
        context(
            f"{len(plan.actions)} acties · hoogstens {plan.bound} verwijderingen per keer "
            f"({plan.graph_size} onderwerpen) · plan `{escape(plan.plan_id)}`"
        )
    )
    groups = [
        plan.actions[i : i + MAX_CHECKBOX_OPTIONS]
        for i in range(0, len(plan.actions), MAX_CHECKBOX_OPTIONS)
    ]
    room = (MAX_MESSAGE_BLOCKS - _FIXED) // 2
    for g, group in enumerate(groups[:room]):
        first = g * MAX_CHECKBOX_OPTIONS + 1
        per_line = SAFE_SECTION_TEXT // len(group) - 1
        text = "\n".join(_line(first + i, a, per_line) for i, a in enumerate(group))
        options = [
            Option(value=a.key, label=truncate(f"{first + i}. {PLAN_KINDS_NL[a.kind]}", 75))
            for i, a in enumerate(group)
        ]
        blocks.append(section(text))
        blocks.append(
            ActionsBlock(
                block_id=f"plan_group_{g}",
                elements=[
                    CheckboxesElement(
                        action_id=f"{ids.PLAN_PICK_PREFIX}{g}",
                        options=options,
                        initial_options=options,
                    )
                ],
            ).to_dict()
        )
    if len(groups) > room:
        hidden = len(plan.actions) - room * MAX_CHECKBOX_OPTIONS
        blocks.append(context(f"… en nog {hidden} acties: zie `r42 graph analyze`."))
    if plan.skipped:
        blocks.append(context(escape(truncate("Overgeslagen: " + "; ".join(plan.skipped), 2900))))
    blocks.append(
        ActionsBlock(
            block_id="plan_actions",
            elements=[
                button("Geselecteerde toepassen", ids.PLAN_APPLY, plan.plan_id, style="primary"),
                button("Verwerpen", ids.PLAN_DISCARD, plan.plan_id, style="danger"),
            ],
        ).to_dict()
    )
    return blocks


def selected_keys(state: dict[str, Any]) -> list[str]:
    """The chosen action keys from a click's `state.values` (every plan checkbox group)."""
    keys: list[str] = []
    for block in (state.get("values") or {}).values():
        for action_id, element in (block or {}).items():
            if not str(action_id).startswith(ids.PLAN_PICK_PREFIX):
                continue
            for option in element.get("selected_options") or []:
                value = str(option.get("value", ""))
                if value and value not in keys:
                    keys.append(value)
    return keys


def applied_blocks(reply: GraphApplyReply, *, by: str, at: str) -> Blocks:
    """The result of an apply, with Undo."""
    parts = [
        f"{reply.merged} samengevoegd" if reply.merged else "",
        f"{reply.deleted} verwijderd" if reply.deleted else "",
        f"{reply.relations} relaties toegevoegd" if reply.relations else "",
        f"{reply.relevance} relevanties aangepast" if reply.relevance else "",
    ]
    done = ", ".join(p for p in parts if p) or "niets veranderd"
    return [
        header(TITLE),
        section(f":white_check_mark: Toegepast door {mention(by)} om {at}: {done}."),
        ActionsBlock(
            block_id="plan_undo",
            elements=[button("Ongedaan maken", ids.PLAN_UNDO, reply.undo_id, style="danger")],
        ).to_dict(),
        context(
            f"Wijziging `{escape(reply.undo_id)}` · ook: `r42 graph undo {escape(reply.undo_id)}`"
        ),
    ]


def undone_blocks(reply: GraphUndoReply, *, by: str, at: str) -> Blocks:
    """After Undo."""
    return [
        header(TITLE),
        section(
            f":leftwards_arrow_with_hook: Ongedaan gemaakt door {mention(by)} om {at}: "
            f"{reply.topics} onderwerpen hersteld of verwijderd."
        ),
    ]


def discarded_blocks(*, by: str, at: str) -> Blocks:
    """After Discard."""
    return [header(TITLE), section(f":wastebasket: Plan verworpen door {mention(by)} om {at}.")]
